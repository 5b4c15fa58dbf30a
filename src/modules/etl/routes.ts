import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, role } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import {
  CrawlerRunRequest,
  CrawlerStarted,
  CrawlerStatus,
  CrawlerStatusQuery,
  JobRunParams,
  JobRunRequest,
  JobRunStarted,
  JobRunStatus,
  JobStatusQuery,
  PartitionsAdded,
  PartitionsQuery,
} from './schemas.js';
import type { EtlService } from './service.js';

const tags = ['etl'];
const access = role('ADMIN', 'DEVELOPER');

export const etlRoutes: FastifyPluginAsyncTypebox<{ etl: EtlService }> = async (app, { etl }) => {
  app.post('/jobs/run', {
    config: { access },
    schema: {
      tags, operationId: 'runEtlJob', summary: 'Start a configured Glue job',
      description: 'ADMIN and DEVELOPER. Starts the configured job for job_type and returns its run id; an unconfigured job is 404 (Unknown ETL job), a failure of the cloud call 500 with a request ID.',
      body: JobRunRequest,
      response: { 200: JobRunStarted, ...errorResponses(401, 403, 404, 422, 500) },
    },
  }, (req) => etl.runJob(actorOf(req), req.body.job_type));

  app.get('/jobs/:run_id/status', {
    config: { access },
    schema: {
      tags, operationId: 'getEtlJobStatus', summary: 'State of a Glue job run',
      description: 'ADMIN and DEVELOPER. State of a job run (query job_name names the configured job); an unknown run is 404 (Job run not found).',
      params: JobRunParams, querystring: JobStatusQuery,
      response: { 200: JobRunStatus, ...errorResponses(401, 403, 404, 422, 500) },
    },
  }, (req) => etl.jobStatus(req.params.run_id, req.query.job_name));

  app.post('/crawler/run', {
    config: { access },
    schema: {
      tags, operationId: 'runEtlCrawler', summary: 'Start a configured Glue crawler',
      description: 'ADMIN and DEVELOPER. Starts a crawler that is named in the server configuration; any other name is 404 (Unknown crawler). A crawler already running is 409; a failure of the cloud call is 500 with a request ID.',
      body: CrawlerRunRequest,
      response: { 200: CrawlerStarted, ...errorResponses(401, 403, 404, 409, 422, 500) },
    },
  }, (req) => etl.runCrawler(actorOf(req), req.body.crawler_name));

  app.get('/crawler/status', {
    config: { access },
    schema: {
      tags, operationId: 'getEtlCrawlerStatus', summary: 'State and last crawl of a configured Glue crawler',
      description: 'ADMIN and DEVELOPER. State and last crawl of a configured crawler (query crawler_name); other names are 404.',
      querystring: CrawlerStatusQuery,
      response: { 200: CrawlerStatus, ...errorResponses(401, 403, 404, 422, 500) },
    },
  }, (req) => etl.crawlerStatus(req.query.crawler_name));

  app.post('/partitions/add', {
    config: { access },
    schema: {
      tags, operationId: 'addEtlPartitions', summary: "Register a day's 24 hourly partitions of a configured Glue table",
      description: 'ADMIN and DEVELOPER. Registers the 24 hourly partitions of one day (date=YYYY-MM-DD, else 422) on a configured table; 201 only when all are registered or already existed. An unknown or missing table is 404, a table not partitioned by day and hour 409, a read or register failure 500 with a request ID.',
      querystring: PartitionsQuery,
      response: { 201: PartitionsAdded, ...errorResponses(401, 403, 404, 409, 422, 500) },
    },
  }, async (req, reply) =>
    reply.code(201).send(await etl.addPartitions(actorOf(req), req.query.database, req.query.table, req.query.date)));
};
