import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { beta } from '../../platform/openapi.js';
import { errorResponses } from '../../platform/schemas.js';
import {
  BulkEvaluateBody,
  BulkEvaluation,
  MembersAddBody,
  MembersAdded,
  MembersRemoveBody,
  MembersRemoved,
  PreviewBody,
  PreviewQuery,
  PreviewResult,
  SegmentCreate,
  SegmentDetail,
  SegmentEvaluateBody,
  SegmentEvaluation,
  SegmentListQuery,
  SegmentParams,
  SegmentUpdate,
  SegmentUsage,
  SegmentView,
} from './schemas.js';
import type { SegmentsService } from './service.js';

const tags = ['segments'];
const editors = () => role('ADMIN', 'DEVELOPER');

export const segmentsRoutes: FastifyPluginAsyncTypebox<{ segments: SegmentsService }> = async (app, { segments }) => {
  app.post('', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'createSegment', summary: 'Create a segment (rules, or an id list)',
      description: 'ADMIN and DEVELOPER. kind rules (default) needs rules: 1 to 20 groups, at most 50 conditions, 10 regex conditions and 1,000 list values (422 otherwise); kind id_list takes no rules and its members are added through the members route.',
      body: SegmentCreate,
      response: { 201: SegmentView, ...errorResponses(401, 403, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await segments.create(actorOf(req), req.body)));

  app.get('', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listSegments', summary: 'List segments, newest first',
      description: 'Any signed-in role. Segments newest first, optionally filtered by status (active, inactive, archived).',
      querystring: SegmentListQuery,
      response: { 200: Type.Array(SegmentView), ...errorResponses(401, 422) },
    },
  }, (req) => segments.list(req.query));

  app.post('/bulk-evaluate', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'bulkEvaluateSegments', summary: 'Membership of one user context in up to 50 segments',
      description: 'Any signed-in role. Whether one user context is a member of each of up to 50 segments; a segment that cannot be evaluated answers false. The context is limited to 10 levels and 8,192 bytes.',
      body: BulkEvaluateBody,
      response: { 200: BulkEvaluation, ...errorResponses(401, 422) },
    },
  }, (req) => segments.bulkEvaluate(req.body.segment_ids, req.body.user_context));

  app.get('/:segment_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readSegment', summary: 'A segment with member_count (null for rules segments)',
      description: 'Any signed-in role. The segment with member_count for id lists (null for rules segments). A non-UUID id is 422.',
      params: SegmentParams,
      response: { 200: SegmentDetail, ...errorResponses(401, 404, 422) },
    },
  }, (req) => segments.get(req.params.segment_id));

  app.put('/:segment_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'updateSegment', summary: 'Change name, description, rules or status (kind never changes)',
      description: 'ADMIN and DEVELOPER. Changes name, description, rules or status; kind never changes, and rules for an id list are 422. Setting inactive or archived while in use is 409.',
      params: SegmentParams, body: SegmentUpdate,
      response: { 200: SegmentView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => segments.update(actorOf(req), req.params.segment_id, req.body));

  app.delete('/:segment_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'archiveSegment', summary: 'Archive a segment (refused while flags or experiments use it)',
      description: 'ADMIN and DEVELOPER. Archives the segment. While a non-archived flag or a draft, active or paused experiment names it, the answer is 409 segment_in_use listing them, and nothing changes.',
      params: SegmentParams,
      response: { 204: Type.Null({ description: 'Archived' }), ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, async (req, reply) => {
    await segments.archive(actorOf(req), req.params.segment_id);
    return reply.code(204).send(null);
  });

  app.post('/:segment_id/evaluate', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'evaluateSegment', summary: 'Whether a user context is a member, with the conditions it satisfied',
      description: 'Any signed-in role. Whether the user context is a member, with each satisfied condition in matched_rules. An id list checks user_context.user_id. Segments stored in an old rule format are 409.',
      params: SegmentParams, body: SegmentEvaluateBody,
      response: { 200: SegmentEvaluation, ...errorResponses(401, 404, 409, 422) },
    },
  }, (req) => segments.evaluate(req.params.segment_id, req.body.user_context));

  app.get('/:segment_id/experiments', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listSegmentUsage', summary: 'Experiments and feature flags whose rules name the segment',
      description: 'Any signed-in role. Experiments and feature flags whose targeting rules name the segment.',
      params: SegmentParams,
      response: { 200: SegmentUsage, ...errorResponses(401, 404, 422) },
    },
  }, (req) => segments.usage(req.params.segment_id));

  app.post('/:segment_id/preview', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'previewSegment', summary: 'Estimated share of stored user contexts the rules match',
      description: 'Any signed-in role. Share of stored user contexts (sample_size 10 to 10,000) that the rules in the body match. Assignments store no context today, so the usual answer is 0 of 0 (no data).',
      params: SegmentParams, querystring: PreviewQuery, body: PreviewBody,
      response: { 200: PreviewResult, ...errorResponses(401, 404, 409, 422) },
    },
  }, (req) => segments.preview(req.params.segment_id, req.body?.rules, req.query.sample_size));

  app.post('/:segment_id/members', {
    config: { access: editors() },
    schema: {
      ...beta, tags, operationId: 'addSegmentMembers', summary: 'Add ids to an id_list segment (at most 1,000,000 per segment)',
      description: 'ADMIN and DEVELOPER. Beta: adds 1 to 10,000 ids (each 1 to 255 characters, repeats counted once) to an id_list segment of at most 1,000,000 ids (422 beyond, nothing added). A rules or archived segment is 409.',
      params: SegmentParams, body: MembersAddBody,
      response: { 200: MembersAdded, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => segments.addMembers(actorOf(req), req.params.segment_id, req.body.add));

  app.post('/:segment_id/members/remove', {
    config: { access: editors() },
    schema: {
      ...beta, tags, operationId: 'removeSegmentMembers', summary: 'Remove ids from an id_list segment',
      description: 'ADMIN and DEVELOPER. Beta: removes 1 to 10,000 ids from an id_list segment and reports which were not members. A rules or archived segment is 409.',
      params: SegmentParams, body: MembersRemoveBody,
      response: { 200: MembersRemoved, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => segments.removeMembers(actorOf(req), req.params.segment_id, req.body.remove));
};
