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
      body: JobRunRequest,
      response: { 200: JobRunStarted, ...errorResponses(401, 403, 404, 422, 500) },
    },
  }, (req) => etl.runJob(actorOf(req), req.body.job_type));

  app.get('/jobs/:run_id/status', {
    config: { access },
    schema: {
      tags, operationId: 'getEtlJobStatus', summary: 'State of a Glue job run',
      params: JobRunParams, querystring: JobStatusQuery,
      response: { 200: JobRunStatus, ...errorResponses(401, 403, 404, 422, 500) },
    },
  }, (req) => etl.jobStatus(req.params.run_id, req.query.job_name));

  app.post('/crawler/run', {
    config: { access },
    schema: {
      tags, operationId: 'runEtlCrawler', summary: 'Start a configured Glue crawler',
      body: CrawlerRunRequest,
      response: { 200: CrawlerStarted, ...errorResponses(401, 403, 404, 409, 422, 500) },
    },
  }, (req) => etl.runCrawler(actorOf(req), req.body.crawler_name));

  app.get('/crawler/status', {
    config: { access },
    schema: {
      tags, operationId: 'getEtlCrawlerStatus', summary: 'State and last crawl of a configured Glue crawler',
      querystring: CrawlerStatusQuery,
      response: { 200: CrawlerStatus, ...errorResponses(401, 403, 404, 422, 500) },
    },
  }, (req) => etl.crawlerStatus(req.query.crawler_name));

  app.post('/partitions/add', {
    config: { access },
    schema: {
      tags, operationId: 'addEtlPartitions', summary: "Register a day's 24 hourly partitions of a configured Glue table",
      querystring: PartitionsQuery,
      response: { 201: PartitionsAdded, ...errorResponses(401, 403, 404, 409, 422, 500) },
    },
  }, async (req, reply) =>
    reply.code(201).send(await etl.addPartitions(actorOf(req), req.query.database, req.query.table, req.query.date)));
};
