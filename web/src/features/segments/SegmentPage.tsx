import { useState, type FormEvent } from 'react';
import { FormError, Select, TextField, fieldError, fieldErrorsUnder } from '../../components/form';
import { RuleBuilder, emptyRules, fromRules, toRules, type RulesDraft } from '../../components/rule-builder';
import { Badge, ErrorBox, Loading, PageHeader } from '../../components/ui';
import { requiredText } from '../../components/validate';
import { useRouter } from '../../router';
import { useSession } from '../auth/session';
import { IdListUpload } from './IdListUpload';
import { SEGMENT_TONE } from './SegmentsList';
import { useArchiveSegment, useCreateSegment, useSegment, useUpdateSegment, type Segment } from './hooks';

type Status = 'active' | 'inactive' | 'archived';

export function NewSegment() {
  const { navigate } = useRouter();
  const create = useCreateSegment();
  const [name, setName] = useState('');
  const [kind, setKind] = useState<'rules' | 'id_list'>('rules');
  const [rules, setRules] = useState<RulesDraft>({ logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: '', operator: 'equals', value: '' }] }] });
  const [nameProblem, setNameProblem] = useState<string>();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problem = requiredText(name);
    setNameProblem(problem);
    if (problem) return;
    create.mutate(kind === 'rules' ? { name, kind, rules: toRules(rules) ?? emptyRules() } : { name, kind }, { onSuccess: (s) => navigate(`/segments/${s.id}`) });
  };
  return (
    <section>
      <PageHeader title="New segment" />
      <form className="card" onSubmit={submit} noValidate>
        <TextField label="Name" required value={name} error={nameProblem ?? fieldError(create.error, 'name')} onChange={(e) => setName(e.target.value)} />
        <Select
          label="Kind"
          value={kind}
          error={fieldError(create.error, 'kind')}
          hint="Set once: an ID list is filled by uploading user IDs, a rules segment matches user attributes."
          onChange={(e) => setKind(e.target.value as 'rules' | 'id_list')}
          options={[
            ['rules', 'Rules on user attributes'],
            ['id_list', 'List of user IDs (CSV upload)'],
          ]}
        />
        {kind === 'rules' && <RuleBuilder value={rules} onChange={setRules} error={fieldErrorsUnder(create.error, 'rules')} idPrefix="segment-rules" />}
        <FormError error={create.error} shown={['name', 'kind', 'rules']} />
        <div className="row">
          <button type="submit" disabled={create.isPending}>
            Create segment
          </button>
          <button type="button" className="secondary" onClick={() => navigate('/segments')}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

export function SegmentPage({ id }: { id: string }) {
  const segment = useSegment(id);
  if (segment.isPending) return <Loading rows={5} label="Loading segment" />;
  if (segment.isError) return <ErrorBox error={segment.error} />;
  return <SegmentView key={segment.data.id} segment={segment.data} />;
}

function SegmentView({ segment }: { segment: Segment }) {
  const { permissions } = useSession();
  const update = useUpdateSegment(segment.id);
  const archive = useArchiveSegment(segment.id);
  const [name, setName] = useState(segment.name);
  const [status, setStatus] = useState<Status>(segment.status as Status);
  const [rules, setRules] = useState<RulesDraft>(fromRules(segment.rules));
  const canChange = permissions.canChangeSegments && segment.status !== 'archived';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate({ name, status, ...(segment.kind === 'rules' ? { rules: toRules(rules) ?? emptyRules() } : {}) });
  };
  return (
    <section>
      <PageHeader
        title={segment.name}
        actions={
          canChange && (
            <button type="button" className="danger" onClick={() => window.confirm(`Archive “${segment.name}”?`) && archive.mutate()}>
              Archive
            </button>
          )
        }
      />
      <p className="meta">
        <Badge tone={SEGMENT_TONE[segment.status as Status]}>{segment.status}</Badge> {segment.kind === 'id_list' ? 'ID list' : 'Rules'}
        {segment.member_count !== null && segment.member_count !== undefined && (
          <>
            {' '}
            · <strong className="member-count">{segment.member_count.toLocaleString()}</strong> {segment.member_count === 1 ? 'member' : 'members'}
          </>
        )}
      </p>
      {archive.isError && <FormError error={archive.error} />}
      <div className="grid-2 flag-layout">
        <form className="card" onSubmit={submit} noValidate aria-label="Segment settings">
          <fieldset disabled={!canChange} className="plain-fieldset">
            <TextField label="Name" value={name} error={fieldError(update.error, 'name')} onChange={(e) => setName(e.target.value)} />
            <Select
              label="Status"
              value={status}
              error={fieldError(update.error, 'status')}
              onChange={(e) => setStatus(e.target.value as Status)}
              options={[
                ['active', 'Active'],
                ['inactive', 'Inactive'],
              ]}
            />
            {segment.kind === 'rules' && <RuleBuilder value={rules} onChange={setRules} error={fieldErrorsUnder(update.error, 'rules')} idPrefix="segment-rules" />}
          </fieldset>
          <FormError error={update.error} shown={['name', 'status', 'rules']} />
          {update.isSuccess && (
            <p className="alert alert-success" role="status">
              Saved.
            </p>
          )}
          {canChange && (
            <button type="submit" disabled={update.isPending}>
              Save segment
            </button>
          )}
        </form>
        {segment.kind === 'id_list' && canChange && <IdListUpload segmentId={segment.id} />}
      </div>
    </section>
  );
}
