import { useId, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, type TextareaHTMLAttributes } from 'react';
import { ApiError } from '../api/client';

/** A labelled control with its hint and the API's message for this field (by `loc`), wired for screen readers. */
export function Field({
  label,
  error,
  hint,
  children,
}: {
  label: string;
  error?: string;
  hint?: string;
  children: (props: { id: string; 'aria-invalid': boolean; 'aria-describedby'?: string }) => ReactNode;
}) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': Boolean(error), 'aria-describedby': described })}
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p className="field-error" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

export function TextField({ label, error, hint, ...input }: { label: string; error?: string; hint?: string } & InputHTMLAttributes<HTMLInputElement>) {
  return <Field label={label} error={error} hint={hint}>{(p) => <input {...input} {...p} />}</Field>;
}

export function TextArea({ label, error, hint, ...input }: { label: string; error?: string; hint?: string } & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return <Field label={label} error={error} hint={hint}>{(p) => <textarea {...input} {...p} />}</Field>;
}

export function Select({
  label,
  error,
  hint,
  options,
  ...input
}: { label: string; error?: string; hint?: string; options: ReadonlyArray<readonly [string, string]> } & SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <Field label={label} error={error} hint={hint}>
      {(p) => (
        <select {...input} {...p}>
          {options.map(([value, text]) => (
            <option key={value} value={value}>
              {text}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/**
 * The error of a failed call: its message, plus any field messages no field on the form claimed, so nothing the
 * API said is dropped. A field in `shown` claims its path and every path under it; one in `exact` only its own.
 */
export function FormError({ error, shown = [], exact = [] }: { error: unknown; shown?: string[]; exact?: string[] }) {
  if (!error) return null;
  const apiError = error instanceof ApiError ? error : null;
  const claimed = (key: string) => exact.includes(key) || shown.some((s) => key === s || key.startsWith(`${s}.`));
  const others = apiError ? Object.entries(apiError.fieldErrors).filter(([key]) => !claimed(key)) : [];
  return (
    <div className="alert alert-error" role="alert">
      <p>{error instanceof Error ? error.message : 'Something went wrong.'}</p>
      {others.length > 0 && (
        <ul>
          {others.map(([key, msg]) => (
            <li key={key}>
              <code>{key || 'request'}</code>: {msg}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The message the API gave for `key`, if the error is a 422 naming it. */
export function fieldError(error: unknown, key: string): string | undefined {
  return error instanceof ApiError ? error.fieldErrors[key] : undefined;
}

/** Every message the API gave at or under `prefix` (`targeting_rules`, `targeting_rules.groups.0`), joined. */
export function fieldErrorsUnder(error: unknown, prefix: string): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const messages = Object.entries(error.fieldErrors)
    .filter(([key]) => key === prefix || key.startsWith(`${prefix}.`))
    .map(([, msg]) => msg);
  return messages.length ? messages.join(' ') : undefined;
}
