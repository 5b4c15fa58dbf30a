import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { apiKey, clientOf, keyRefusal, type KeyClient } from '../../platform/auth.js';
import { DomainError, ServiceUnavailable, TooManyRequests } from '../../platform/errors.js';
import { beta } from '../../platform/openapi.js';
import { errorResponses } from '../../platform/schemas.js';
import { eventStreams } from '../../platform/sse.js';
import { SdkRuleset, SdkStreamHeaders } from './schemas.js';
import { matchesIfNoneMatch, versionOf, type SdkRulesetBody, type SdkService } from './service.js';

const tags = ['sdk'];
const RECONNECT_HINT_MS = 1_000;
/** Open streams one API key may hold in one API process (a fleet of SDK servers sharing a key fits; a loop does not). */
export const MAX_STREAMS_PER_KEY = 100;
export const TOO_MANY_KEY_STREAMS = 'Too many open ruleset streams for this API key; close some or use another key';
export const TOO_MANY_STREAMS = 'Too many open ruleset streams on this server; retry shortly';
/** setTimeout's longest delay; a later expiry is re-armed when this one fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const STREAM_ACCESS = apiKey({ scope: 'sdk:ruleset' });

/** What the stream asks of API keys: the key's current standing, and word when it or its owner changes. */
export interface StreamKeys {
  resolve(rawKey: string): Promise<KeyClient | undefined>;
  watch(client: Pick<KeyClient, 'keyId' | 'userId'>, changed: () => void): () => void;
  /** Milliseconds until the key expires (0 or less: expired); null: it never does. */
  expiresInMs(client: Pick<KeyClient, 'expiresAt'>): number | null;
}

export interface SdkRoutesOptions {
  sdk: SdkService;
  keys: StreamKeys;
  heartbeatSeconds: number;
  /** Open streams in this process (SDK_STREAM_MAX_CONNECTIONS). */
  maxConnections: number;
  /** A client this far behind is cut off; it reconnects with Last-Event-ID and gets the current ruleset. */
  maxBufferBytes: number;
}

export const sdkRoutes: FastifyPluginAsyncTypebox<SdkRoutesOptions> = async (app, options) => {
  const { sdk, keys, heartbeatSeconds, maxConnections, maxBufferBytes } = options;
  const streams = eventStreams(app);

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
    const body = await sdk.ruleset(clientOf(req).environment);
    // no-cache: clients may store the ruleset but must revalidate it every time (flags are never served stale).
    reply.header('ETag', body.etag).header('Cache-Control', 'no-cache');
    if (matchesIfNoneMatch(req.headers['if-none-match'], body.etag)) return reply.code(304).send(null);
    // The bytes the ETag hashes are sent as they are (Fastify does not re-serialise a string payload).
    return reply.type('application/json; charset=utf-8').send(body.json as unknown as Static<typeof SdkRuleset>);
  });

  app.get('/ruleset/stream', {
    config: { access: STREAM_ACCESS },
    schema: {
      ...beta, tags, operationId: 'streamSdkRuleset',
      summary: 'Server-sent events: the ruleset on connect and again after every flag or segment change, on any instance',
      description:
        'Event `ruleset` (id: the version, the value of the ruleset ETag): data `{"version", "heartbeat_seconds", "ruleset"}` ' +
        'where `ruleset` is what GET /sdk/ruleset answers. Sent on connect and after every committed flag or segment change ' +
        'that changes the ruleset. A client sending `Last-Event-ID` equal to the current version gets event `version` ' +
        '(data `{"version", "heartbeat_seconds"}`, no ruleset) instead of the first `ruleset`. Comment lines are heartbeats, ' +
        'every `heartbeat_seconds`; a client that hears nothing for several of them should reconnect. The stream ends when ' +
        'the key stops being accepted (deleted, expired, its owner deactivated, deleted or without the access the route needs) ' +
        `and when the client reads too slowly. At most ${MAX_STREAMS_PER_KEY} open streams per key (429) and ` +
        'SDK_STREAM_MAX_CONNECTIONS per server (503), both with Retry-After.',
      headers: SdkStreamHeaders,
      response: {
        200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        ...errorResponses(401, 403, 422, 429, 503),
      },
    },
  }, async (req, reply) => {
    const rawKey = req.headers['x-api-key'] as string;
    let client = clientOf(req);
    // Read before taking over the response, so that a failure is an ordinary error answer.
    const { environment } = client;
    const first = await sdk.ruleset(environment);
    // Counted after the last await, so concurrent opens cannot all pass the check.
    if (streams.heldBy(client.keyId) >= MAX_STREAMS_PER_KEY) throw new TooManyRequests(RECONNECT_HINT_MS / 1000, TOO_MANY_KEY_STREAMS);
    if (streams.size >= maxConnections) throw new ServiceUnavailable(TOO_MANY_STREAMS, RECONNECT_HINT_MS / 1000);
    let sent = versionOf(first);
    let expiryTimer: NodeJS.Timeout | undefined;
    const expired = () => (keys.expiresInMs(client) ?? 1) <= 0;
    const meta = (version: string) => `{"version":${JSON.stringify(version)},"heartbeat_seconds":${heartbeatSeconds}`;
    const stream = streams.open(req, reply, {
      heartbeatSeconds, retryMs: RECONNECT_HINT_MS, maxBufferBytes, owner: client.keyId,
      // Each heartbeat also revalidates the ruleset: a change whose bus message was lost still reaches the client.
      onHeartbeat: () => {
        if (expired()) {
          stream.end();
          return;
        }
        recheck();
        sdk.ruleset(environment).then(send, () => undefined);
      },
      onEnd: () => {
        clearTimeout(expiryTimer);
        stopWatching();
        stopWatchingKey();
      },
    });
    const send = (body: SdkRulesetBody) => {
      const version = versionOf(body);
      if (version === sent || stream.ended) return;
      // Nothing is sent past the key's expiry, whether or not its timer has fired yet.
      if (expired()) {
        stream.end();
        return;
      }
      sent = version;
      stream.write(`event: ruleset\nid: ${version}\ndata: ${meta(version)},"ruleset":${body.json}}\n\n`);
    };
    const armExpiry = () => {
      clearTimeout(expiryTimer);
      const left = keys.expiresInMs(client);
      if (left === null || stream.ended) return;
      const wait = Math.min(Math.max(0, left), MAX_TIMER_MS);
      expiryTimer = setTimeout(recheck, wait);
      expiryTimer.unref();
    };
    /**
     * The stream stays open only while a new request with its key would be admitted: asked again when the key or
     * its owner changes (any process), at the key's expiry and on every heartbeat (a lost bus message, an owner
     * the identity provider no longer vouches for). A refusal ends the stream; a failure to ask (database down)
     * does not, the next heartbeat asks again.
     */
    function recheck(): void {
      if (stream.ended) return;
      keys.resolve(rawKey).then(
        (now) => {
          if (!now || now.keyId !== client.keyId || keyRefusal(STREAM_ACCESS, now)) stream.end();
          else {
            client = now;
            armExpiry();
          }
        },
        (error: unknown) => void (error instanceof DomainError && stream.end()),
      );
    }
    const stopWatching = sdk.watch(send, environment);
    const stopWatchingKey = keys.watch(client, recheck);
    armExpiry();
    stream.write(stream.lastEventId === sent
      ? `event: version\nid: ${sent}\ndata: ${meta(sent)}}\n\n`
      : `event: ruleset\nid: ${sent}\ndata: ${meta(sent)},"ruleset":${first.json}}\n\n`);
  });
};
