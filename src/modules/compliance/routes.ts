import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { role } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { ComplianceReport, EventsPage, EventsQuery, ExportJson, ExportQuery, ReportQuery } from './schemas.js';
import type { ComplianceService } from './service.js';

const tags = ['compliance'];

/** GET /compliance/audit-events: served in every profile. */
export const complianceEventsRoutes: FastifyPluginAsyncTypebox<{ compliance: ComplianceService }> = async (app, { compliance }) => {
  app.get('/audit-events', {
    config: { access: role('ADMIN', 'ANALYST') },
    schema: {
      tags, operationId: 'listComplianceAuditEvents',
      summary: 'Signed audit events, newest first; each carries hmac_signature and its chain link',
      description: 'ADMIN and ANALYST (others 403). Signed audit events, newest first, filtered by action, resource_type, actor_id and a time window and paged with page and limit; each event carries its HMAC-SHA256 signature and the link to the previous one, so the chain can be verified.',
      querystring: EventsQuery,
      response: { 200: EventsPage, ...errorResponses(401, 403, 422) },
    },
  }, (req) => compliance.events(req.query));
};

/** Reports and export: the compliance module of the full profile. */
export const complianceModuleRoutes: FastifyPluginAsyncTypebox<{ compliance: ComplianceService }> = async (app, { compliance }) => {
  app.get('/reports/soc2', {
    config: { access: role('ADMIN', 'ANALYST') },
    schema: {
      tags, operationId: 'getSoc2Report', summary: 'SOC 2 evidence report over the audit trail (default 365 days)',
      description: 'ADMIN and ANALYST. Evidence for a SOC 2 review computed from the signed audit trail over a period (default the last 365 days).',
      querystring: ReportQuery(365),
      response: { 200: ComplianceReport, ...errorResponses(401, 403, 422) },
    },
  }, (req) => compliance.report('SOC2', req.query.period_days));

  app.get('/reports/iso27001', {
    config: { access: role('ADMIN', 'ANALYST') },
    schema: {
      tags, operationId: 'getIso27001Report', summary: 'ISO 27001 evidence report over the audit trail (default 730 days)',
      description: 'ADMIN and ANALYST. Evidence for an ISO 27001 review computed from the signed audit trail over a period (default the last 730 days).',
      querystring: ReportQuery(730),
      response: { 200: ComplianceReport, ...errorResponses(401, 403, 422) },
    },
  }, (req) => compliance.report('ISO27001', req.query.period_days));

  app.get('/export', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'exportComplianceAuditEvents', summary: 'Every signed audit event in a period, as JSON or CSV',
      description: 'ADMIN only. Every signed audit event between start_time and end_time, as a JSON array or CSV (format=json or csv), for handing to an auditor.',
      querystring: ExportQuery,
      response: {
        200: {
          description: 'The events (JSON) or one CSV row per event',
          content: { 'application/json': { schema: ExportJson }, 'text/csv': { schema: { type: 'string' } } },
        },
        ...errorResponses(401, 403, 422),
      },
    },
  }, async (req, reply) => {
    if (req.query.format === 'csv') {
      const csv = await compliance.exportCsv(req.query);
      return reply
        .type('text/csv; charset=utf-8')
        .header('Content-Disposition', 'attachment; filename="compliance-audit-events.csv"')
        .send(csv);
    }
    return reply.type('application/json; charset=utf-8').send(await compliance.exportJson(req.query));
  });
};
