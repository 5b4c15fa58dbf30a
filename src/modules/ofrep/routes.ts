import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import secureJson from 'secure-json-parse';
import { Type } from 'typebox';
import { apiKey, clientOf, open } from '../../platform/auth.js';
import { exceedsDepth, MAX_JSON_DEPTH } from '../../platform/body-parsers.js';
import { Unauthorized } from '../../platform/errors.js';
import { beta } from '../../platform/openapi.js';
import { errorResponses } from '../../platform/schemas.js';
import { eventStreams } from '../../platform/sse.js';
import {
  OfrepBulkAnswer,
  OfrepBulkHeaders,
  OfrepBulkQuery,
  OfrepFailure,
  OfrepFlagParams,
  OfrepRequest,
  OfrepStreamHeaders,
  OfrepStreamQuery,
  OfrepSuccess,
} from './schemas.js';
import { STREAM_PATH, UNPARSABLE, type OfrepReply, type OfrepService } from './service.js';

const tags = ['ofrep'];
/** A client this far behind is dropped; on reconnecting it is told to refetch. */
const MAX_STREAM_BUFFER_BYTES = 1 << 20;
const RECONNECT_HINT_MS = 1_000;
export const STREAM_TOKEN_REFUSED = 'Invalid or expired event stream token';

/**
 * The schemas of the evaluation routes document them (OpenAPI); their answers are OFREP's own, decided by the service
 * from the body as parsed (readRequest), so Ajv's check, whose result attachValidation would discard, is not run.
 */
const documentedOnly = () => () => true;

/** The JSON text each parsed body came from: the service bounds the context's size by it (checkParsedContext). */
const sources = new WeakMap<object, string>();
const sourceOf = (body: unknown): string | undefined => (typeof body === 'object' && body !== null ? sources.get(body) : undefined);

function send(reply: FastifyReply, answer: OfrepReply) {
  if (answer.etag) reply.header('ETag', answer.etag).header('Cache-Control', 'no-cache');
  if (answer.status === 304) return reply.code(304).send();
  // The answer arrives serialised (the bulk ETag hashes these bytes); a string payload with this type is sent as is.
  return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.json as never);
}

/**
 * The OpenFeature Remote Evaluation Protocol (open-feature/protocol service/openapi.yaml, ADRs 0006 and 0008). Its
 * failures are its own shapes (`{key, errorCode, errorDetails}`), not the API's `{detail}`: the body is parsed and
 * checked here (attachValidation keeps the documented schemas from answering 422) and the service decides the answer.
 */
export const ofrepRoutes: FastifyPluginAsyncTypebox<{ ofrep: OfrepService; heartbeatSeconds: number }> = async (app, { ofrep, heartbeatSeconds }) => {
  // Encapsulated: only these routes read text that is not JSON as UNPARSABLE, answered PARSE_ERROR.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    if (exceedsDepth(text, MAX_JSON_DEPTH)) return done(null, UNPARSABLE);
    let parsed: unknown;
    try {
      parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch {
      return done(null, UNPARSABLE);
    }
    if (typeof parsed === 'object' && parsed !== null) sources.set(parsed, text);
    done(null, parsed);
  });

  const streams = eventStreams(app);

  app.post('/evaluate/flags/:key', {
    config: { access: apiKey({ bearer: true }) },
    attachValidation: true,
    validatorCompiler: documentedOnly,
    schema: {
      ...beta, tags, operationId: 'ofrepEvaluateFlag',
      summary: 'OFREP: evaluate one flag for a context',
      description:
        'OpenFeature Remote Evaluation Protocol. API key as X-API-Key or Authorization: Bearer. context.targetingKey is the user id; ' +
        'the other keys are the evaluation context, held to the evaluate routes\' limits (INVALID_CONTEXT). Unknown or archived flag: 404 FLAG_NOT_FOUND. ' +
        'A flag that buckets users (partial rollout) or names an id-list segment needs targetingKey (400 TARGETING_KEY_MISSING). An unparsable body is 400 PARSE_ERROR.',
      params: OfrepFlagParams, body: OfrepRequest,
      response: { 200: OfrepSuccess, 400: OfrepFailure, 404: OfrepFailure, ...errorResponses(401, 429) },
    },
  }, async (req, reply) => send(reply, await ofrep.evaluate(req.params.key, req.body, clientOf(req).environment, sourceOf(req.body))));

  app.post('/evaluate/flags', {
    config: { access: apiKey({ bearer: true }) },
    attachValidation: true,
    validatorCompiler: documentedOnly,
    schema: {
      ...beta, tags, operationId: 'ofrepEvaluateFlags',
      summary: 'OFREP: evaluate every flag for a context; ETag and 304; an event stream announcing changes',
      description:
        'Every flag that is not archived, for this context (each a success or a failure such as TARGETING_KEY_MISSING). ' +
        'The ETag hashes the answer: send it as If-None-Match to get 304 while this context\'s answer is the same. ' +
        '`eventStreams` names a server-sent-events stream (ADR 0008) on this origin whose URL carries a short-lived signed token.',
      headers: OfrepBulkHeaders, querystring: OfrepBulkQuery, body: OfrepRequest,
      response: {
        200: OfrepBulkAnswer,
        304: Type.Null({ description: 'Not modified: the ETag sent is this context\'s current answer' }),
        400: OfrepFailure,
        ...errorResponses(401, 429),
      },
    },
  }, async (req, reply) => {
    const client = clientOf(req);
    return send(reply, await ofrep.evaluateAll(client.keyId, req.body, req.headers['if-none-match'], client.environment, sourceOf(req.body)));
  });

  app.get(STREAM_PATH.slice('/ofrep/v1'.length), {
    // The token in the URL is the credential (an EventSource sends no custom header); CORS as the API-key routes.
    config: { access: open(), clientFacing: true },
    schema: {
      ...beta, tags, operationId: 'ofrepEventStream',
      summary: 'OFREP server-sent events: refetchEvaluation after every committed flag or segment change, on any instance',
      description:
        'The URL comes from the bulk answer\'s eventStreams. Events are `event: message` with data ' +
        '`{"type":"refetchEvaluation","etag":<ruleset version>}` and the version as id; a client reconnecting with a ' +
        'Last-Event-ID that is not current gets one at once. Comment lines are heartbeats. The stream ends when the API key ' +
        'that asked for it is deleted or its owner deactivated. An invalid or expired token is 401.',
      querystring: OfrepStreamQuery, headers: OfrepStreamHeaders,
      response: {
        200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        ...errorResponses(401, 422, 429),
      },
    },
  }, async (req, reply) => {
    const streamKey = await ofrep.streamKey(req.query.token);
    if (streamKey === undefined) throw new Unauthorized(STREAM_TOKEN_REFUSED);
    const { keyId, environment } = streamKey;
    let sent = await ofrep.version(environment);
    // Each heartbeat also checks the key (a lost bus message about its deletion) and the version (a lost change).
    const stream = streams.open(req, reply, {
      heartbeatSeconds, retryMs: RECONNECT_HINT_MS, maxBufferBytes: MAX_STREAM_BUFFER_BYTES,
      onHeartbeat: () => {
        ofrep.isUsable(keyId).then((usable) => (usable ? undefined : stream.end()), () => undefined);
        ofrep.version(environment).then(refetch, () => undefined);
      },
      onEnd: () => stop(),
    });
    const refetch = (version: string) => {
      if (version === sent) return;
      sent = version;
      stream.write(`id: ${version}\nevent: message\ndata: ${JSON.stringify({ type: 'refetchEvaluation', etag: version })}\n\n`);
    };
    const stop = ofrep.watch({ keyId, environment, changed: refetch, revoked: () => stream.end() });
    // An id without data sets the client's Last-Event-ID, so a reconnect tells which version it had heard of.
    stream.write(`id: ${sent}\n\n`);
    if (stream.lastEventId !== undefined && stream.lastEventId !== sent) {
      stream.write(`id: ${sent}\nevent: message\ndata: ${JSON.stringify({ type: 'refetchEvaluation', etag: sent })}\n\n`);
    }
  });
};
