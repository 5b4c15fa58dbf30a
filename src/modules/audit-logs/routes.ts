import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { ServiceUnavailable, TooManyRequests } from '../../platform/errors.js';
import { errorResponses } from '../../platform/schemas.js';
import { eventStreams } from '../../platform/sse.js';
import { bearerExpiry } from '../../platform/tokens.js';
import {
  AuditLogListQuery,
  AuditLogPage,
  AuditStats,
  EntityParams,
  PageQuery,
  StatsQuery,
  StreamHeaders,
  StreamQuery,
  UserParams,
} from './schemas.js';
import type { AuditLogsService } from './service.js';

const tags = ['audit-logs'];
/** A client this far behind is dropped; it reconnects with Last-Event-ID and resumes from the table. */
const MAX_STREAM_BUFFER_BYTES = 1 << 20;
const RECONNECT_HINT_MS = 5_000;
/** Open streams one account may hold in one API process. */
export const MAX_STREAMS_PER_ACCOUNT = 5;
export const TOO_MANY_STREAMS = 'Too many open audit streams';

export const auditLogsRoutes: FastifyPluginAsyncTypebox<{ auditLogs: AuditLogsService; heartbeatSeconds: number; maxConnections: number }> = async (
  app,
  { auditLogs, heartbeatSeconds, maxConnections },
) => {
  const stopRelay = await auditLogs.startRelay((error) => app.log.error({ err: error }, 'sealing audit entries failed'));
  const streams = eventStreams(app);
  app.addHook('onClose', async () => stopRelay());

  app.get('/', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listAuditLogs',
      summary: 'Audit entries, newest first (ADMIN and ANALYST: all; DEVELOPER and VIEWER: their own)',
      description: 'ADMIN and ANALYST read every entry; DEVELOPER and VIEWER see only entries they caused. Filters narrow by action, entity, actor and time, newest first, paged.',
      querystring: AuditLogListQuery,
      response: { 200: AuditLogPage, ...errorResponses(401, 403, 422) },
    },
  }, (req) => auditLogs.list(actorOf(req), req.query));

  app.get('/entity/:entity_type/:entity_id', {
    config: { access: role('ADMIN', 'ANALYST') },
    schema: {
      tags, operationId: 'getEntityAuditHistory', summary: "An entity's change history, newest first",
      description: 'ADMIN and ANALYST only (others 403). The change history of one entity (for example a feature flag or experiment), newest first.',
      params: EntityParams, querystring: PageQuery,
      response: { 200: AuditLogPage, ...errorResponses(401, 403, 422) },
    },
  }, (req) => auditLogs.history(actorOf(req), req.params.entity_type, req.params.entity_id, req.query.skip, req.query.limit));

  app.get('/user/:user_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'getUserAuditActivity',
      summary: "An account's audit entries (ADMIN and ANALYST: anyone's; others: their own)",
      description: "ADMIN and ANALYST may read any account's entries; DEVELOPER and VIEWER only their own (another account is 403). Newest first, paged.",
      params: UserParams, querystring: PageQuery,
      response: { 200: AuditLogPage, ...errorResponses(401, 403, 422) },
    },
  }, (req) => auditLogs.userActivity(actorOf(req), req.params.user_id, req.query.skip, req.query.limit));

  app.get('/stats', {
    config: { access: role('ADMIN', 'ANALYST') },
    schema: {
      tags, operationId: 'getAuditLogStats', summary: 'Counts by action, entity type, actor and day over a period',
      description: 'ADMIN and ANALYST only (others 403). Counts entries by action, entity type, actor and day over the requested period.',
      querystring: StatsQuery,
      response: { 200: AuditStats, ...errorResponses(401, 403, 422) },
    },
  }, (req) => auditLogs.stats(req.query.days));

  app.get('/stream', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'streamAuditLogs',
      summary: 'Server-sent events: each new audit entry the caller may read, after its transaction commits',
      description:
        'Each entry is one event whose `id` is its sequence and whose `data` is the entry as JSON. Comment lines ' +
        'are heartbeats. Send `Last-Event-ID` (EventSource does on reconnect) to first receive the entries after that id.',
      querystring: StreamQuery, headers: StreamHeaders,
      response: {
        200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        ...errorResponses(401, 403, 422, 429, 503),
      },
    },
  }, (req, reply) => {
    const actor = actorOf(req);
    if (streams.heldBy(actor.id) >= MAX_STREAMS_PER_ACCOUNT) throw new TooManyRequests(RECONNECT_HINT_MS / 1000, TOO_MANY_STREAMS);
    if (streams.size >= maxConnections) throw new ServiceUnavailable(TOO_MANY_STREAMS, RECONNECT_HINT_MS / 1000);
    const stream = streams.open(req, reply, {
      heartbeatSeconds, retryMs: RECONNECT_HINT_MS, maxBufferBytes: MAX_STREAM_BUFFER_BYTES, owner: actor.id, onEnd: () => close(),
    });
    stream.write(': connected\n\n');
    const close = auditLogs.openStream(
      actor,
      {
        lastEventId: stream.lastEventId === undefined ? undefined : Number(stream.lastEventId),
        action: req.query.action,
        entityType: req.query.entity_type,
        expiresAt: bearerExpiry(req.headers.authorization),
      },
      {
        send: (sequence, entry) => stream.write(`id: ${sequence}\ndata: ${JSON.stringify(entry)}\n\n`),
        fail: (error) => {
          req.log.error({ err: error, request_id: req.id }, 'audit stream failed');
          stream.end();
        },
        end: () => stream.end(),
      },
    );
  });
};
