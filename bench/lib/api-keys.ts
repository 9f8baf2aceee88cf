/**
 * A `read` API key for each access token, made as a company's owner makes one: `POST
 * /api/v1/api-keys` with the owner's bearer token answers the secret (`rk_…`) this once. One
 * key per company, so that each connection of a run authenticates with a key of its own (as
 * with one user per connection for the JWT route: a single key would flatter its cache).
 */
export async function readKeys(baseUrl: string, tokens: readonly string[]): Promise<string[]> {
  const keys: string[] = [];
  for (const token of tokens) {
    const res = await fetch(`${baseUrl}/api/v1/api-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'bench', scope: 'read' }),
    });
    const text = await res.text();
    if (res.status !== 201)
      throw new Error(`POST /api/v1/api-keys: expected 201, got ${res.status}: ${text}`);
    const { key } = (JSON.parse(text) as { data: { key: string } }).data;
    if (!key.startsWith('rk_')) throw new Error(`POST /api/v1/api-keys answered a key not starting rk_`);
    keys.push(key);
  }
  return keys;
}
