import { Type, type Static } from 'typebox';
import { DateTime, Nullable, StringEnum } from '../../platform/schemas.js';

const Name = (description: string) => Type.String({ minLength: 1, maxLength: 255, description });

export const JobRunRequest = Type.Object(
  { job_type: Name('A job type named in ETL_GLUE_JOBS') },
  { additionalProperties: false, examples: [{ job_type: 'daily_aggregation' }] },
);
export const JobRunStarted = Type.Object({
  run_id: Type.String(),
  job_type: Type.String(),
  job_name: Type.String(),
  status: Type.String(),
});

export const JobRunParams = Type.Object({ run_id: Name('Glue job run id') });
export const JobStatusQuery = Type.Object({ job_name: Name('The job type or its Glue job name') });
export const JobRunStatus = Type.Object({
  run_id: Type.String(),
  job_name: Type.String(),
  status: Type.String({ description: 'Glue JobRunState, e.g. RUNNING, SUCCEEDED, FAILED' }),
  started_on: Nullable(DateTime()),
  completed_on: Nullable(DateTime()),
  execution_time_seconds: Nullable(Type.Integer()),
  error_message: Nullable(Type.String()),
});
export type JobRunStatus = Static<typeof JobRunStatus>;

export const CrawlerRunRequest = Type.Object(
  { crawler_name: Name('A crawler named in ETL_GLUE_CRAWLERS') },
  { additionalProperties: false, examples: [{ crawler_name: 'uplift-events-crawler' }] },
);
export const CrawlerStarted = Type.Object({ crawler_name: Type.String(), status: Type.String() });
export const CrawlerStatusQuery = Type.Object({ crawler_name: Name('A crawler named in ETL_GLUE_CRAWLERS') });
export const CrawlerStatus = Type.Object({
  crawler_name: Type.String(),
  state: Type.String({ description: 'Glue crawler state: READY, RUNNING, STOPPING' }),
  last_crawl: Nullable(
    Type.Object({ status: Type.String(), error_message: Nullable(Type.String()), started_at: Nullable(DateTime()) }),
  ),
});
export type CrawlerStatus = Static<typeof CrawlerStatus>;

export const PartitionsQuery = Type.Object({
  database: Name('Glue database'),
  table: Name('Glue table; database.table must be named in ETL_GLUE_TABLES'),
  date: Type.String({ maxLength: 32, description: 'The day, YYYY-MM-DD' }),
});
export const PartitionsAdded = Type.Object({
  database: Type.String(),
  table: Type.String(),
  date: Type.String(),
  created: Type.Integer({ minimum: 0 }),
  already_present: Type.Integer({ minimum: 0 }),
  partitions: Type.Array(
    Type.Object({ values: Type.Array(Type.String()), location: Type.String(), status: StringEnum(['created', 'already_present']) }),
  ),
});
export type PartitionsAdded = Static<typeof PartitionsAdded>;
