import { describe, expect, it } from 'vitest';
import { createBus } from '../../platform/bus.js';
import type { RulesetSnapshot } from '../feature-flags/ruleset.js';
import { FLAGS_CHANGED, flagsChangedMessage } from '../feature-flags/service.js';
import { SEGMENTS_CHANGED } from '../segments/service.js';
import { createSdkService } from './service.js';

/** A snapshot per environment, counting how often each is asked for: only a change's environment is rebuilt. */
function setup() {
  const bus = createBus({ namespace: 't' });
  const asked: string[] = [];
  const snapshots = new Map<string, RulesetSnapshot>();
  const snapshot = async (environment?: string) => {
    const key = environment ?? 'default';
    asked.push(key);
    if (!snapshots.has(key)) snapshots.set(key, { flags: [], segments: new Map(), key } as unknown as RulesetSnapshot);
    return snapshots.get(key)!;
  };
  const sdk = createSdkService({ snapshot, bus });
  const heard: Record<string, number> = { production: 0, staging: 0 };
  sdk.watch(() => void heard.production++, 'production');
  sdk.watch(() => void heard.staging++, 'staging');
  return { bus, asked, heard };
}
const settle = () => new Promise<void>((r) => queueMicrotask(() => queueMicrotask(() => setImmediate(r))));

describe('SDK streams per environment', () => {
  it("wakes only the changed environment's streams, and every environment's on a shared change", async () => {
    const { bus, asked, heard } = setup();
    await bus.publish(FLAGS_CHANGED, flagsChangedMessage({ environment: 'staging', flag: 'f' }));
    await settle();
    expect(heard).toEqual({ production: 0, staging: 1 });
    expect(asked).toEqual(['staging']);
    await bus.publish(FLAGS_CHANGED, flagsChangedMessage({ environment: null, flag: 'f' }));
    await settle();
    expect(heard).toEqual({ production: 1, staging: 2 });
    await bus.publish(SEGMENTS_CHANGED, 's');
    await settle();
    expect(heard).toEqual({ production: 2, staging: 3 });
    await bus.close();
  });
});
