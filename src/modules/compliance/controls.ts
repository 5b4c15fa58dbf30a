/**
 * Which audit entries a report counts as evidence for each control. The reports list evidence; they do not judge
 * whether a control is effective. Entries are matched by entity type and action words, so new modules' entries
 * (e.g. `custom_role_create`, `permission_grant`) are counted without listing every action here.
 */
export type Framework = 'SOC2' | 'ISO27001';

export interface Control {
  id: string;
  title: string;
  matches(action: string, entityType: string): boolean;
}

const ACCESS_ENTITIES = new Set(['user', 'api_key', 'role', 'custom_role', 'permission', 'permission_grant']);
const ACCESS_WORDS = /(^|_)(role|user|api_key|permission|grant|revoke|login)(_|$)/;
const PROVISIONING_WORDS = /(^|_)(create|activate|deactivate|assign|revoke|grant|delete)(_|$)/;
const MONITORING_WORDS = /(^|_)(rollback|safety|srm|alert)(_|$)/;

const isAccess = (action: string, entityType: string) => ACCESS_ENTITIES.has(entityType) || ACCESS_WORDS.test(action);
const isProvisioning = (action: string, entityType: string) => isAccess(action, entityType) && PROVISIONING_WORDS.test(action);
const isMonitoring = (action: string, entityType: string) => MONITORING_WORDS.test(action) || MONITORING_WORDS.test(entityType);
const isChange = (action: string, entityType: string) => !isAccess(action, entityType) && !isMonitoring(action, entityType);
const any = () => true;

export const CONTROLS: Record<Framework, Control[]> = {
  SOC2: [
    { id: 'CC6.1', title: 'Logical access security over accounts, roles and keys', matches: isAccess },
    { id: 'CC6.2', title: 'Registration, authorisation and removal of access', matches: isProvisioning },
    { id: 'CC7.2', title: 'Monitoring of system components for anomalies', matches: isMonitoring },
    { id: 'CC8.1', title: 'Authorised and recorded changes to experiments, flags and configuration', matches: isChange },
  ],
  ISO27001: [
    { id: 'A.5.15', title: 'Access control', matches: isAccess },
    { id: 'A.5.18', title: 'Access rights: provisioning, review and removal', matches: isProvisioning },
    { id: 'A.8.15', title: 'Logging: events recorded and protected against tampering', matches: any },
    { id: 'A.8.16', title: 'Monitoring activities', matches: isMonitoring },
    { id: 'A.8.32', title: 'Change management', matches: isChange },
  ],
};
