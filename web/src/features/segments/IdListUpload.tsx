import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type ChangeEvent } from 'react';
import { ErrorBox, plural } from '../../components/ui';
import { IDS_PER_REQUEST, chunks, parseIdCsv } from './csv';
import { useAddMembers } from './hooks';

interface Progress {
  sent: number;
  total: number;
  added: number;
  already: number;
  memberCount?: number;
}

/** Adds the user IDs of a CSV file to an id-list segment, 10,000 per request, with a progress bar. */
export function IdListUpload({ segmentId }: { segmentId: string }) {
  const inputId = useId();
  const client = useQueryClient();
  const add = useAddMembers(segmentId);
  const [file, setFile] = useState<{ name: string; ids: string[]; tooLong: number } | null>(null);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [running, setRunning] = useState(false);

  const choose = async (event: ChangeEvent<HTMLInputElement>) => {
    const chosen = event.target.files?.[0];
    setProgress(null);
    setError(null);
    if (!chosen) return setFile(null);
    const parsed = parseIdCsv(await chosen.text());
    setFile({ name: chosen.name, ...parsed });
  };

  const upload = async () => {
    if (!file) return;
    setRunning(true);
    setError(null);
    let state: Progress = { sent: 0, total: file.ids.length, added: 0, already: 0 };
    setProgress(state);
    try {
      for (const batch of chunks(file.ids, IDS_PER_REQUEST)) {
        const answer = await add.mutateAsync(batch);
        state = { ...state, sent: state.sent + batch.length, added: state.added + answer.added, already: state.already + answer.already_members, memberCount: answer.member_count };
        setProgress(state);
      }
    } catch (failure) {
      setError(failure);
    } finally {
      setRunning(false);
      await client.invalidateQueries({ queryKey: ['segment', segmentId] });
    }
  };

  const share = progress && progress.total > 0 ? progress.sent / progress.total : 0;
  return (
    <section className="card" aria-labelledby={`${inputId}-title`}>
      <h2 id={`${inputId}-title`}>Upload user IDs</h2>
      <div className="field">
        <label htmlFor={inputId}>CSV file</label>
        <input id={inputId} type="file" accept=".csv,text/csv,text/plain" onChange={(e) => void choose(e)} aria-describedby={`${inputId}-hint`} disabled={running} />
        <p className="hint" id={`${inputId}-hint`}>
          One user ID per row in the first column; a header row named user_id or id is skipped.
        </p>
      </div>
      {file && (
        <p>
          <strong>{file.ids.length.toLocaleString()}</strong> distinct IDs in {file.name}
          {file.tooLong > 0 && <span className="field-error"> · {file.tooLong} longer than 255 characters left out</span>}
        </p>
      )}
      <button type="button" disabled={!file || file.ids.length === 0 || running} onClick={() => void upload()}>
        {running ? 'Uploading…' : 'Add to segment'}
      </button>
      {progress && (
        <div className="upload-progress">
          <label htmlFor={`${inputId}-progress`} className="progress-label">
            {progress.sent.toLocaleString()} of {progress.total.toLocaleString()} IDs sent
          </label>
          <progress id={`${inputId}-progress`} max={1} value={share} />
          {!running && !error && (
            <p role="status" className="upload-done">
              Done: {progress.added.toLocaleString()} added, {progress.already.toLocaleString()} already members
              {progress.memberCount !== undefined ? `; the segment now has ${plural(progress.memberCount, 'member')}` : ''}.
            </p>
          )}
        </div>
      )}
      {error ? <ErrorBox error={error} /> : null}
    </section>
  );
}
