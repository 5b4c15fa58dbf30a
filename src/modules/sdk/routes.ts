import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { apiKey } from '../../platform/auth.js';
import { beta } from '../../platform/openapi.js';
import { errorResponses } from '../../platform/schemas.js';
import { SdkRuleset, SdkStreamHeaders } from './schemas.js';
import { matchesIfNoneMatch, versionOf, type SdkRulesetBody, type SdkService } from './service.js';

const tags = ['sdk'];
/** A client this far behind is cut off; it reconnects with Last-Event-ID and gets the current ruleset. */
const MAX_STREAM_BUFFER_BYTES = 8 << 20;
const RECONNECT_HINT_MS = 1_000;

export const sdkRoutes: FastifyPluginAsyncTypebox<{ sdk: SdkService; heartbeatSeconds: number }> = async (app, { sdk, heartbeatSeconds }) => {
  const streams = new Set<ServerResponse>();
  // Open streams never end by themselves; end them so the server can close.
  app.addHook('preClose', async () => {
    for (const stream of streams) stream.end();
  });

  app.get('/ruleset', {
    config: { access: apiKey({ scope: 'sdk:ruleset' }) },
    schema: {
      tags, operationId: 'downloadSdkRuleset',
      summary: 'Every flag with its targeting rules and rollout, the segments they name and the bucketing version; ETag and 304',
      description: 'Needs an API key with scope sdk:ruleset (403 otherwise). Every flag with its targeting rules and rollout, the segments they name and the bucketing version, for local evaluation. Send If-None-Match with the last ETag to get 304 when nothing changed.',
      headers: Type.Object({ 'if-none-match': Type.Optional(Type.String()) }),
      response: { 200: SdkRuleset, 304: Type.Null({ description: 'Not modified: the ETag sent is current' }), ...errorResponses(401, 403, 429) },
    },
  }, async (req, reply) => {
    const body = await sdk.ruleset();
    // no-cache: clients may store the ruleset but must revalidate it every time (flags are never served stale).
    reply.header('ETag', body.etag).header('Cache-Control', 'no-cache');
    if (matchesIfNoneMatch(req.headers['if-none-match'], body.etag)) return reply.code(304).send(null);
    // The bytes the ETag hashes are sent as they are (Fastify does not re-serialise a string payload).
    return reply.type('application/json; charset=utf-8').send(body.json as unknown as Static<typeof SdkRuleset>);
  });

  app.get('/ruleset/stream', {
    config: { access: apiKey({ scope: 'sdk:ruleset' }) },
    schema: {
      ...beta, tags, operationId: 'streamSdkRuleset',
      summary: 'Server-sent events: the ruleset on connect and again after every flag or segment change, on any instance',
      description:
        'Event `ruleset` (id: the version, the value of the ruleset ETag): data `{"version", "heartbeat_seconds", "ruleset"}` ' +
        'where `ruleset` is what GET /sdk/ruleset answers. Sent on connect and after every committed flag or segment change ' +
        'that changes the ruleset. A client sending `Last-Event-ID` equal to the current version gets event `version` ' +
        '(data `{"version", "heartbeat_seconds"}`, no ruleset) instead of the first `ruleset`. Comment lines are heartbeats, ' +
        'every `heartbeat_seconds`; a client that hears nothing for several of them should reconnect.',
      headers: SdkStreamHeaders,
      response: {
        200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        ...errorResponses(401, 403, 422, 429),
      },
    },
  }, async (req, reply) => {
    // Read before taking over the response, so that a failure is an ordinary error answer.
    const first = await sdk.ruleset();
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      // Headers set by hooks (request id, CORS) are kept: the reply object does not send this response.
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      'X-Request-ID': req.id,
    });
    streams.add(res);
    let sent = versionOf(first);
    const meta = (version: string) => `{"version":${JSON.stringify(version)},"heartbeat_seconds":${heartbeatSeconds}`;
    const send = (body: SdkRulesetBody) => {
      const version = versionOf(body);
      if (version === sent || res.writableEnded) return;
      sent = version;
      write(`event: ruleset\nid: ${version}\ndata: ${meta(version)},"ruleset":${body.json}}\n\n`);
    };
    const write = (text: string) => {
      res.write(text);
      if (res.writableLength > MAX_STREAM_BUFFER_BYTES) end();
    };
    // Each heartbeat also revalidates the ruleset: a change whose bus message was lost still reaches the client.
    const heartbeat = setInterval(() => {
      sdk.ruleset().then(send, () => undefined);
      if (!res.writableEnded) write(': heartbeat\n\n');
    }, heartbeatSeconds * 1000);
    const stopWatching = sdk.watch(send);
    const end = () => {
      clearInterval(heartbeat);
      stopWatching();
      streams.delete(res);
      if (!res.writableEnded) res.end();
    };
    res.on('close', end);
    const event = req.headers['last-event-id'] === sent
      ? `event: version\nid: ${sent}\ndata: ${meta(sent)}}\n\n`
      : `event: ruleset\nid: ${sent}\ndata: ${meta(sent)},"ruleset":${first.json}}\n\n`;
    write(`retry: ${RECONNECT_HINT_MS}\n${event}`);
  });
};
