import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { accepts, freePort, sleep, stopChild } from './service';

export interface RunningOpenDkim {
  pid: number;
  port: number;
  /** From `opendkim -V`, e.g. "OpenDKIM Filter v2.11.0". */
  version: string;
  output(): string;
  stop(): Promise<void>;
}

/** The opendkim binary on PATH or in Debian's /usr/sbin (not always on a user's PATH), or null. */
export function findOpenDkim(): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs.filter(Boolean)) {
    const file = join(dir, 'opendkim');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Debian's OpenDKIM (`apt-get install opendkim`) in the foreground, signing for `domain` with
 * the same key and canonicalisation as the agent (relaxed/relaxed, rsa-sha256), on a free port
 * of 127.0.0.1, from a configuration generated in a temporary directory. OpenDKIM signs only
 * mail from its InternalHosts or with an `{auth_authen}` macro; the bench client sends both (a
 * client address listed there, and the AUTH macros Postfix sends after SMTP AUTH).
 */
export async function startOpenDkim(
  binary: string,
  key: { domain: string; selector: string; privateKeyPem: string },
  clientAddress: string,
  timeoutMs = 10_000,
): Promise<RunningOpenDkim> {
  const version =
    /OpenDKIM Filter v\S+/.exec(spawnSync(binary, ['-V'], { encoding: 'utf8' }).stdout)?.[0] ?? 'OpenDKIM';
  const dir = mkdtempSync(join(tmpdir(), 'relay-bench-opendkim-'));
  const port = await freePort();
  const keyFile = join(dir, `${key.selector}.private`);
  writeFileSync(keyFile, key.privateKeyPem, { mode: 0o600 });
  writeFileSync(join(dir, 'internal-hosts'), `127.0.0.1\n${clientAddress}\n`);
  const config = join(dir, 'opendkim.conf');
  writeFileSync(
    config,
    [
      'Mode s',
      `Domain ${key.domain}`,
      `Selector ${key.selector}`,
      `KeyFile ${keyFile}`,
      `Socket inet:${port}@127.0.0.1`,
      'Canonicalization relaxed/relaxed',
      'SignatureAlgorithm rsa-sha256',
      `InternalHosts ${join(dir, 'internal-hosts')}`,
      // The agent logs nothing per message either (LOG_LEVEL=warn).
      'Syslog no',
      'SoftwareHeader no',
      // The temporary directory is the bench's, not a root-owned path as OpenDKIM wants by default.
      'RequireSafeKeys no',
      'Background no',
      '',
    ].join('\n'),
  );

  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    tail.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (tail.length > 40) tail.splice(0, tail.length - 40);
  };
  const child = spawn(binary, ['-f', '-x', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited with ${signal ?? code}`));
  child.once('error', (e) => (exited = `failed: ${e.message}`));
  const output = () => tail.join('\n');
  const stop = async () => {
    await stopChild(child, 5_000);
    rmSync(dir, { recursive: true, force: true });
  };

  const started = performance.now();
  try {
    for (;;) {
      if (exited) throw new Error(`opendkim ${exited} before it listened:\n${output()}`);
      if (performance.now() - started > timeoutMs)
        throw new Error(`opendkim did not listen within ${timeoutMs} ms:\n${output()}`);
      if (await accepts(port)) break;
      await sleep(20);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { pid: child.pid!, port, version, output, stop };
}
