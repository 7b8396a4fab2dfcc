/** A failure the api reported: its problem+json `detail`, shown to the operator in words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** The api could not be reached at all (network down, api restarting). */
export class ConnectionLost extends Error {
  constructor() {
    super('The api cannot be reached; retrying.');
  }
}

export interface ApiResponse<T> {
  readonly status: number;
  readonly body: T;
  readonly etag: string | null;
}

export interface RequestOptions {
  readonly body?: unknown;
  readonly ifMatch?: string;
  readonly signal?: AbortSignal;
  /** Further request headers (such as X-Change-Reason). */
  readonly headers?: Readonly<Record<string, string>>;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Calls the api (same origin) with the operator's token; any non-2xx becomes an ApiError with the api's words. */
export async function request<T>(
  token: string,
  method: Method,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = {
    ...options.headers,
    authorization: `Bearer ${token}`,
    accept: 'application/json',
  };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
      signal: options.signal ?? null,
      cache: 'no-store',
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ConnectionLost();
  }
  if (!response.ok) throw new ApiError(response.status, await problemDetail(response));
  const text = response.status === 204 ? '' : await response.text();
  return {
    status: response.status,
    body: (text === '' ? undefined : JSON.parse(text)) as T,
    etag: response.headers.get('etag'),
  };
}

/** The problem+json `detail` (else its title, else the status line), with the names of invalid fields. */
export async function problemDetail(response: Response): Promise<string> {
  const fallback = `The api answered ${response.status} ${response.statusText}`.trim();
  try {
    const problem = (await response.json()) as { detail?: unknown; title?: unknown; errors?: unknown };
    const detail =
      typeof problem.detail === 'string'
        ? problem.detail
        : typeof problem.title === 'string'
          ? problem.title
          : fallback;
    if (!Array.isArray(problem.errors)) return detail;
    const fields = problem.errors
      .map((error: unknown) =>
        typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined,
      )
      .filter((message): message is string => typeof message === 'string' && !detail.includes(message));
    return fields.length === 0 ? detail : `${detail}: ${fields.join('; ')}`;
  } catch {
    return fallback;
  }
}

/** `W/"3"` for aggregate version 3: what `If-Match` compares (DESIGN 4.3). */
export const versionTag = (version: number): string => `W/"${version}"`;

/** A query string from the defined parameters only. */
export function query(parameters: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters))
    if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
