import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

/** The built admin command (`npm run admin:create`). */
const ADMIN_CREATE_JS = join(__dirname, '..', '..', 'dist', 'cli', 'admin-create.js');

/**
 * A superAdmin made the way an operator makes one, and its access token: `node
 * dist/cli/admin-create.js --email … --role superAdmin` with the service's environment (its
 * database) and the password piped on standard input, then `POST /api/v1/admins/login`.
 */
export async function superAdminToken(baseUrl: string, serviceEnv: Record<string, string>): Promise<string> {
  const email = `bench-admin-${randomBytes(5).toString('hex')}@example.com`;
  const password = `bench admin ${randomBytes(12).toString('hex')}`;
  const child = spawn(
    process.execPath,
    [ADMIN_CREATE_JS, '--email', email, '--role', 'superAdmin', '--name', 'Bench Admin'],
    {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...serviceEnv },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stdin.end(`${password}\n`);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`admin-create exited with ${code}:\n${output}`);

  const res = await fetch(`${baseUrl}/api/v1/admins/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST /api/v1/admins/login: ${res.status} ${text.slice(0, 300)}`);
  const { accessToken, expiresIn } = (
    JSON.parse(text) as { data: { accessToken: string; expiresIn: number } }
  ).data;
  if (expiresIn < 600)
    throw new Error(`The admin's access token lives ${expiresIn} s: too short for the run`);
  return accessToken;
}
