import { createContext, useCallback, useContext, useEffect, useRef, useState, type ReactNode } from 'react';

/**
 * Short confirmations ("Flag saved.") shown in one polite live region at the corner of the page. A toast outlives
 * the component that raised it, so a form that remounts after saving (its key is the saved version) still confirms.
 */
interface Toast {
  id: number;
  text: string;
  tone: 'success' | 'error';
}
interface ToastApi {
  show(text: string, tone?: Toast['tone']): void;
}

const ToastContext = createContext<ToastApi | null>(null);
/** How long a toast stays; it can also be dismissed. */
export const TOAST_MS = 5_000;

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const next = useRef(1);
  const dismiss = useCallback((id: number) => setToasts((list) => list.filter((t) => t.id !== id)), []);
  const show = useCallback((text: string, tone: Toast['tone'] = 'success') => {
    const id = next.current++;
    setToasts((list) => [...list.slice(-2), { id, text, tone }]);
  }, []);
  return (
    <ToastContext.Provider value={{ show }}>
      {children}
      <div className="toasts" role="status" aria-live="polite">
        {toasts.map((t) => (
          <ToastItem key={t.id} toast={t} onDismiss={dismiss} />
        ))}
      </div>
    </ToastContext.Provider>
  );
}

function ToastItem({ toast, onDismiss }: { toast: Toast; onDismiss(id: number): void }) {
  useEffect(() => {
    const timer = setTimeout(() => onDismiss(toast.id), TOAST_MS);
    return () => clearTimeout(timer);
  }, [toast.id, onDismiss]);
  return (
    <div className={`toast toast-${toast.tone}`}>
      <span>{toast.text}</span>
      <button type="button" className="link" aria-label="Dismiss" onClick={() => onDismiss(toast.id)}>
        ×
      </button>
    </div>
  );
}

/** Raises a toast; outside a ToastProvider (isolated component tests) it does nothing. */
export function useToast(): ToastApi {
  return useContext(ToastContext) ?? { show: () => undefined };
}
