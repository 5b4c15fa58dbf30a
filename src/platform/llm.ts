import type { LlmConfig } from '../config.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** An OpenAI-compatible chat model. `complete` resolves to the reply text, or undefined when every try failed. */
export interface LlmClient {
  complete(messages: ChatMessage[]): Promise<string | undefined>;
}

/** Spec, limits: a call to an external language model gives up after 30 seconds and is tried at most twice. */
export const LLM_MAX_TRIES = 2;

export function createLlmClient(config: LlmConfig): LlmClient {
  const endpoint = /\/chat\/completions\/?$/.test(config.apiUrl) ? config.apiUrl : `${config.apiUrl.replace(/\/+$/, '')}/chat/completions`;

  async function tryOnce(messages: ChatMessage[]): Promise<string | undefined> {
    try {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${config.apiKey}` },
        body: JSON.stringify({ model: config.model, messages, temperature: 0.2 }),
        signal: AbortSignal.timeout(config.timeoutMs),
      });
      if (!response.ok) {
        await response.body?.cancel();
        return undefined;
      }
      const body = (await response.json()) as { choices?: Array<{ message?: { content?: unknown } }> };
      const content = body.choices?.[0]?.message?.content;
      return typeof content === 'string' && content.trim() ? content : undefined;
    } catch {
      return undefined;
    }
  }

  return {
    async complete(messages) {
      for (let attempt = 0; attempt < LLM_MAX_TRIES; attempt++) {
        const reply = await tryOnce(messages);
        if (reply !== undefined) return reply;
      }
      return undefined;
    },
  };
}

/** The first JSON object in a model reply (models often wrap it in prose or a ```json fence); undefined if none. */
export function extractJsonObject(reply: string): Record<string, unknown> | undefined {
  const start = reply.indexOf('{');
  const end = reply.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const value: unknown = JSON.parse(reply.slice(start, end + 1));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
