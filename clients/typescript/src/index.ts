// A typed client for the ttmemory REST API: openapi-fetch over the types openapi-typescript
// generated from clients/openapi.json (src/schema.d.ts; `./dev clients` regenerates it).
import createClient, { type Client } from "openapi-fetch";
import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths };
export type Schemas = components["schemas"];
/** Every error answer of every operation: RFC 9457 problem details. */
export type Problem = Schemas["Problem"];
export type Session = Schemas["Session"];
export type Message = Schemas["Message"];
export type MemoryClient = Client<paths>;

export interface MemoryClientOptions {
  /** Where the API is mounted, e.g. "https://example.com/api/memory". */
  baseUrl: string;
  /** A DRF token (`Authorization: Token ...`). */
  token?: string;
  /** An API key `ttm_...` (`Authorization: Api-Key ...`). */
  apiKey?: string;
  /** The namespace an API key acts on, when it is granted several. */
  namespace?: string;
  fetch?: typeof globalThis.fetch;
}

export function createMemoryClient(options: MemoryClientOptions): MemoryClient {
  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Token ${options.token}`;
  if (options.apiKey) headers.Authorization = `Api-Key ${options.apiKey}`;
  if (options.namespace) headers["X-Memory-Namespace"] = options.namespace;
  return createClient<paths>({ baseUrl: options.baseUrl, headers, fetch: options.fetch });
}

/** The `before` cursor of a message page's `next` URL (null on the oldest page). */
export function nextCursor(next: string | null): number | undefined {
  if (next === null) return undefined;
  const before = new URL(next).searchParams.get("before");
  return before === null ? undefined : Number(before);
}
