/**
 * Ready-to-paste code for one flag or experiment: the Uplift SDK, the OpenFeature provider, and curl. The key is
 * the one the user chose (or a placeholder that says where it goes); the base URL is where this dashboard is served.
 */
export type SnippetTarget =
  | { kind: 'flag'; key: string }
  | { kind: 'experiment'; key: string; event: string | null };

export interface Snippet {
  id: 'sdk' | 'openfeature' | 'curl';
  label: string;
  language: 'ts' | 'sh';
  code: string;
}

export const KEY_PLACEHOLDER = 'YOUR_API_KEY';

const q = (text: string) => JSON.stringify(text);
/** A value inside a single-quoted shell string. */
const sh = (text: string) => text.replace(/'/g, `'\\''`);

export function snippets(target: SnippetTarget, baseUrl: string, apiKey: string): Snippet[] {
  const key = apiKey || KEY_PLACEHOLDER;
  const client = `const uplift = new Uplift({ baseUrl: ${q(baseUrl)}, apiKey: ${q(key)} });\nawait uplift.ready();`;
  if (target.kind === 'flag') {
    return [
      {
        id: 'sdk',
        label: '@uplift/sdk',
        language: 'ts',
        code: `import { Uplift } from '@uplift/sdk';\n\n// A key with the sdk:ruleset scope: flags are evaluated in your process.\n${client}\n\nif (uplift.isEnabled(${q(target.key)}, userId, { country: 'US' })) {\n  // new behaviour\n}`,
      },
      {
        id: 'openfeature',
        label: 'OpenFeature',
        language: 'ts',
        code: `import { OpenFeature } from '@openfeature/server-sdk';\nimport { UpliftProvider } from '@uplift/openfeature-provider';\n\nawait OpenFeature.setProviderAndWait(new UpliftProvider({ baseUrl: ${q(baseUrl)}, apiKey: ${q(key)} }));\nconst on = await OpenFeature.getClient().getBooleanValue(${q(target.key)}, false, { targetingKey: userId, country: 'US' });`,
      },
      {
        id: 'curl',
        label: 'curl',
        language: 'sh',
        code: `curl -s '${sh(baseUrl)}/api/v1/feature-flags/evaluate/${sh(encodeURIComponent(target.key))}' \\\n  -H 'X-API-Key: ${sh(key)}' -H 'content-type: application/json' \\\n  -d '{"user_id":"user-42","context":{"country":"US"}}'`,
      },
    ];
  }
  const event = target.event ?? 'purchase';
  return [
    {
      id: 'sdk',
      label: '@uplift/sdk',
      language: 'ts',
      code: `import { Uplift } from '@uplift/sdk';\n\n${client}\n\nconst variant = await uplift.assign(${q(target.key)}, userId);\n// show variant.variant_name (variant.configuration holds its settings)\nuplift.track(${q(event)}, userId, { experimentKey: ${q(target.key)} });`,
    },
    {
      id: 'openfeature',
      label: 'OpenFeature',
      language: 'ts',
      code: `import { OpenFeature } from '@openfeature/server-sdk';\nimport { UpliftProvider } from '@uplift/openfeature-provider';\n\nawait OpenFeature.setProviderAndWait(new UpliftProvider({ baseUrl: ${q(baseUrl)}, apiKey: ${q(key)} }));\n// A key that names no flag is an experiment: the answer is the user's variant.\nconst variant = await OpenFeature.getClient().getStringValue(${q(target.key)}, 'control', { targetingKey: userId });`,
    },
    {
      id: 'curl',
      label: 'curl',
      language: 'sh',
      code: `curl -s '${sh(baseUrl)}/api/v1/tracking/assign' -H 'X-API-Key: ${sh(key)}' -H 'content-type: application/json' \\\n  -d '${sh(JSON.stringify({ experiment_key: target.key, user_id: 'user-42' }))}'\ncurl -s '${sh(baseUrl)}/api/v1/tracking/track' -H 'X-API-Key: ${sh(key)}' -H 'content-type: application/json' \\\n  -d '${sh(JSON.stringify({ event_type: event, user_id: 'user-42', experiment_key: target.key }))}'`,
    },
  ];
}
