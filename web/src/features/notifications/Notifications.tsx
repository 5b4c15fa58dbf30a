import { useState, type FormEvent } from 'react';
import { FormError, TextField, fieldError, fieldErrorsUnder } from '../../components/form';
import { useToast } from '../../components/toast';
import { Badge, ErrorBox, Loading, PageHeader } from '../../components/ui';
import { useSession } from '../auth/session';
import { usePreferences, useSavePreferences, useTestNotification, type Preferences } from './hooks';

type EventKind = Preferences['events'][number];
const EVENTS: ReadonlyArray<readonly [EventKind, string]> = [
  ['experiment_started', 'An experiment starts'],
  ['experiment_completed', 'An experiment completes'],
  ['srm_detected', 'A sample ratio mismatch is detected'],
  ['flag_rolled_back', 'A flag is rolled back by safety monitoring'],
];

export function Notifications() {
  const prefs = usePreferences();
  return (
    <section>
      <PageHeader title="Notification settings" />
      {prefs.isPending ? <Loading rows={4} label="Loading settings" /> : prefs.isError ? <ErrorBox error={prefs.error} /> : <PreferencesForm key={prefs.data.updated_at ?? 'new'} prefs={prefs.data} />}
    </section>
  );
}

function PreferencesForm({ prefs }: { prefs: Preferences }) {
  const { permissions } = useSession();
  const save = useSavePreferences();
  const test = useTestNotification();
  const toast = useToast();
  const mailReady = prefs.email_configured;
  const [emailEnabled, setEmailEnabled] = useState(prefs.email_enabled);
  const [email, setEmail] = useState(prefs.email_address ?? '');
  const [chatEnabled, setChatEnabled] = useState(prefs.chat_webhook_enabled);
  const [chatUrl, setChatUrl] = useState(prefs.chat_webhook_url ?? '');
  const [events, setEvents] = useState<EventKind[]>(prefs.events);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(
      { email_enabled: emailEnabled, email_address: email || null, chat_webhook_enabled: chatEnabled, chat_webhook_url: chatUrl || null, events },
      { onSuccess: () => toast.show('Notification settings saved.') },
    );
  };
  return (
    <form className="card" onSubmit={submit} noValidate>
      <fieldset className="plain-fieldset">
        <legend className="h2">Email</legend>
        {!mailReady && (
          <p className="alert alert-warning" id="mail-not-configured">
            Email is not configured on this server (no <code>SMTP_HOST</code>), so no email can be sent. Ask the administrator to set the SMTP settings;
            until then use the chat webhook.
          </p>
        )}
        <label className="inline checkbox">
          <input
            type="checkbox"
            checked={emailEnabled}
            // Off and unusable: it cannot be switched on. Already on: it can still be switched off.
            disabled={!mailReady && !emailEnabled}
            aria-describedby={mailReady ? undefined : 'mail-not-configured'}
            onChange={(e) => setEmailEnabled(e.target.checked)}
          />{' '}
          Send email
        </label>
        <TextField label="Email address" type="email" value={email} error={fieldError(save.error, 'email_address')} onChange={(e) => setEmail(e.target.value)} />
      </fieldset>
      <fieldset className="plain-fieldset">
        <legend className="h2">Chat</legend>
        <label className="inline checkbox">
          <input type="checkbox" checked={chatEnabled} onChange={(e) => setChatEnabled(e.target.checked)} /> Post to a chat webhook
        </label>
        <TextField label="Webhook URL" type="url" value={chatUrl} error={fieldError(save.error, 'chat_webhook_url')} onChange={(e) => setChatUrl(e.target.value)} />
      </fieldset>
      <fieldset className="plain-fieldset">
        <legend className="h2">Tell me when</legend>
        {EVENTS.map(([kind, label]) => (
          <label key={kind} className="inline checkbox block">
            <input type="checkbox" checked={events.includes(kind)} onChange={(e) => setEvents(e.target.checked ? [...events, kind] : events.filter((k) => k !== kind))} /> {label}
          </label>
        ))}
        {fieldErrorsUnder(save.error, 'events') && <p className="field-error">{fieldErrorsUnder(save.error, 'events')}</p>}
      </fieldset>
      <FormError error={save.error} shown={['email_address', 'chat_webhook_url', 'events']} />
      <div className="row">
        <button type="submit" disabled={save.isPending}>
          Save settings
        </button>
        {permissions.canChange && (
          <button type="button" className="secondary" disabled={test.isPending} onClick={() => test.mutate()}>
            Send a test notification
          </button>
        )}
      </div>
      {test.isError && <ErrorBox error={test.error} />}
      {test.data && (
        <ul className="plain" aria-live="polite">
          {test.data.results.length === 0 && <li className="hint">No channel is enabled.</li>}
          {test.data.results.map((r) => (
            <li key={r.notification_id}>
              <Badge tone={r.status === 'sent' ? 'success' : 'danger'}>{r.status}</Badge> {r.channel.replace('_', ' ')} to {r.target}
              {r.error ? `: ${r.error}` : ''}
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}
