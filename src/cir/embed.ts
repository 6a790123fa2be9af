// Embedding vectors for signals. With a provider in vigil.yml that has an
// `embed_model` (type ollama or openai), vectors come from its embeddings
// API. Without one, the weight-free fallback: a hashed n-gram vector —
// character trigrams and whole words of the lower-cased body, each hashed
// (FNV-1a, 32 bit) to one of 256 dimensions with a sign from another bit,
// then L2-normalised. Similar wording gives similar vectors; nothing is
// downloaded or trained.
import { loadWorkspaceConfig } from '../workspace/workspace-config.ts';
import { resolveSecret, systemVault } from '../vault/vault-reader.ts';
import { VigilError } from '../errors/vigil-error.ts';
import { fetchWithin } from '../net/fetch-within.ts';

export const HASHED_MODEL = 'vigil-hashed-ngram-256-v1';
const DIMS = 256;

export interface Embedder {
  model: string;
  embed(texts: string[]): Promise<Float32Array[]>;
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function hashedVector(text: string): Float32Array {
  const v = new Float32Array(DIMS);
  const norm = ` ${text.toLowerCase().replace(/\s+/g, ' ').trim()} `;
  const add = (gram: string, weight: number): void => {
    const h = fnv1a(gram);
    v[h % DIMS]! += (h & 0x80000000 ? -1 : 1) * weight;
  };
  for (let i = 0; i + 3 <= norm.length; i += 1) add(norm.slice(i, i + 3), 1);
  for (const word of norm.split(/[^\p{L}\p{N}]+/u)) if (word) add(`w:${word}`, 2);
  let sum = 0;
  for (const x of v) sum += x * x;
  const len = Math.sqrt(sum) || 1;
  for (let i = 0; i < DIMS; i += 1) v[i]! /= len;
  return v;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

export const hashedEmbedder: Embedder = { model: HASHED_MODEL, embed: async (texts) => texts.map(hashedVector) };

async function post(url: string, body: unknown, apiKey: string | undefined): Promise<unknown> {
  const headers = { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) };
  return fetchWithin(url, { method: 'POST', headers, body: JSON.stringify(body) }, 30_000, (res) => {
    if (!res.ok) throw new VigilError('CIR_UNAVAILABLE', `embedding request to ${url} failed: HTTP ${res.status}`);
    return res.json();
  });
}

/** The embedder the project configures, else the hashed fallback. */
export function projectEmbedder(projectRoot: string): Embedder {
  let config: ReturnType<typeof loadWorkspaceConfig>;
  try {
    config = loadWorkspaceConfig(projectRoot);
  } catch {
    return hashedEmbedder;
  }
  for (const [name, p] of Object.entries(config.providers ?? {})) {
    const model = p.embed_model;
    if (!model || (p.type !== 'ollama' && p.type !== 'openai')) continue;
    const base = (p.base_url ?? (p.type === 'ollama' ? 'http://127.0.0.1:11434' : 'https://api.openai.com/v1')).replace(/\/$/, '');
    const apiKey = resolveSecret(p.api_key, systemVault, `${config.file}: providers.${name}.api_key`);
    if (p.type === 'ollama') {
      return {
        model: `ollama:${model}`,
        embed: async (texts) => {
          const out = (await post(`${base}/api/embed`, { model, input: texts }, apiKey)) as { embeddings: number[][] };
          return out.embeddings.map((e) => Float32Array.from(e));
        },
      };
    }
    return {
      model: `openai:${model}`,
      embed: async (texts) => {
        const out = (await post(`${base}/embeddings`, { model, input: texts }, apiKey)) as { data: Array<{ embedding: number[] }> };
        return out.data.map((d) => Float32Array.from(d.embedding));
      },
    };
  }
  return hashedEmbedder;
}
