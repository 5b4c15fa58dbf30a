import { useState } from 'react';
import { Link } from '../../router';
import { useApiKeys } from '../api-keys/hooks';
import { useSession } from '../auth/session';
import { loadPanelKey } from '../feature-flags/evaluate-key';
import { KEY_PLACEHOLDER, snippets, type SnippetTarget } from './snippets';

/**
 * "Use it in code": the SDK, OpenFeature and curl, filled with this flag's or experiment's key and an API key. The
 * API shows a key's full value only once, at creation, so the dashboard never has the user's keys: it uses the one
 * the evaluate panel keeps (if any) or one the user pastes, and otherwise a placeholder and where to create a key.
 * It never creates a key itself.
 */
export function CodeSnippets({ target }: { target: SnippetTarget }) {
  const { me } = useSession();
  const keys = useApiKeys(false);
  const kept = loadPanelKey(me?.id);
  const [pasted, setPasted] = useState('');
  const [tab, setTab] = useState<'sdk' | 'openfeature' | 'curl'>('sdk');
  const [copied, setCopied] = useState(false);
  const apiKey = pasted.trim() || kept;
  const list = snippets(target, window.location.origin, apiKey);
  const shown = list.find((s) => s.id === tab) ?? list[0];
  const usable = (keys.data ?? []).filter((k) => !k.expires_at || Date.parse(k.expires_at) > Date.now());
  return (
    <section className="card snippets" aria-labelledby="snippets-title">
      <h2 id="snippets-title">Use it in code</h2>
      <div role="tablist" aria-label="Language" className="tabs">
        {list.map((s) => (
          <button key={s.id} type="button" role="tab" aria-selected={s.id === shown.id} className={s.id === shown.id ? '' : 'secondary'} onClick={() => { setTab(s.id); setCopied(false); }}>
            {s.label}
          </button>
        ))}
      </div>
      <pre className="code" role="tabpanel" aria-label={`${shown.label} snippet`}>
        <code>{shown.code}</code>
      </pre>
      <div className="row">
        <button
          type="button"
          className="secondary"
          onClick={() => {
            void navigator.clipboard?.writeText(shown.code).then(() => setCopied(true));
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <label className="field">
        <span>API key in the snippets</span>
        <input type="password" autoComplete="off" value={pasted} placeholder={kept ? 'Using the evaluate panel’s key' : 'Paste one of your keys'} onChange={(e) => setPasted(e.target.value)} />
      </label>
      <p className="hint key-source">
        {pasted.trim()
          ? 'Using the key you pasted (kept only on this page).'
          : kept
            ? 'Using the key the evaluate panel keeps for you in this browser.'
            : `No key chosen: the snippets say ${KEY_PLACEHOLDER}.`}{' '}
        {usable.length > 0 ? (
          <>
            Your keys: {usable.map((k) => `${k.name} (${k.key_prefix}…)`).join(', ')}. A key’s full value is shown only when it is created, so paste it here, or create a new
            one on the <Link to="/api-keys">API keys</Link> page.
          </>
        ) : (
          <>
            You have no API key yet: create one on the <Link to="/api-keys">API keys</Link> page
            {target.kind === 'flag' ? ' (with the sdk:ruleset scope for @uplift/sdk and OpenFeature)' : ''}.
          </>
        )}
      </p>
    </section>
  );
}
