/**
 * Shared by the tests of the modules that call a language model (ai, llm-experiments): a local fake model answering
 * with the file's `respond`, an app configured to use it, the same database without a model, and its requests.
 */
import type { UpliftApp } from '../../src/app.js';
import { startHttpServer, type ReceivedRequest } from './fakes.js';
import { testApp, type TestApp, type TestUser } from './test-app.js';

export type FakeLlm = Awaited<ReturnType<typeof startHttpServer>>;
export type LlmApp = Awaited<ReturnType<typeof llmApp>>;

/** The model's reply carrying `content`, as an OpenAI-style chat completion. */
export const reply = (content: string) => ({ status: 200, body: { choices: [{ message: { role: 'assistant', content } }] } });

export async function llmApp(respond: Parameters<typeof startHttpServer>[0]) {
  const llm: FakeLlm = await startHttpServer(respond);
  const t: TestApp = await testApp({ env: { LLM_API_URL: `${llm.url}/v1`, LLM_API_KEY: 'sk-test', LLM_MODEL: 'judge-model', LLM_TIMEOUT_SECONDS: '1' } });
  /** The same database without a language model configured. */
  const plain: UpliftApp = await t.spawn();
  const [developer, viewer] = await t.users('DEVELOPER', 'VIEWER');

  const get = (url: string, user?: TestUser) => t.inject({ method: 'GET', url, headers: user?.headers });
  const post = (url: string, user: TestUser | undefined, payload?: unknown, app = t.app) =>
    app.inject({ method: 'POST', url, headers: user?.headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  /** What `fn` returns and how many requests the model got meanwhile. */
  const callsDuring = async <T>(fn: () => Promise<T>): Promise<{ result: T; calls: number }> => {
    const before = llm.requests.length;
    const result = await fn();
    return { result, calls: llm.requests.length - before };
  };
  async function close(): Promise<void> {
    await t.close();
    await llm.close();
  }
  return { llm, t, plain, developer, viewer, get, post, callsDuring, close };
}

export type { ReceivedRequest };
