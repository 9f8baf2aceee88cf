import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A private Postfix instance per test run (docs/postfix-notes.md, "A private instance for
 * tests"): its own configuration, queue and data folders in a temporary folder, its own log
 * file under /var/log and its own port on 127.0.0.1. The machine's own Postfix (/etc/postfix,
 * /var/spool/postfix, port 25) is never touched, whether it runs or not. Loopback only, every
 * recipient relayed to `relayPort` on loopback, and the relay restrictions delegated to the
 * policy service on `policyPort`.
 */
interface Instance {
  /** The temporary folder: etc/, spool/ and lib/. */
  dir: string;
  configDir: string;
  port: number;
  logFile: string;
  started: boolean;
}

let instance: Instance | undefined;

/** The log file of the running instance (Postfix writes it through `maillog_file`). */
export function postfixLogFile(): string {
  if (!instance) throw new Error('no Postfix instance runs: call startPostfix first');
  return instance.logFile;
}

/** The port the running instance's smtpd listens on (127.0.0.1). */
export function postfixPort(): number {
  if (!instance) throw new Error('no Postfix instance runs: call startPostfix first');
  return instance.port;
}

/** Postfix and swaks are installed (`.ci/run` installs them) and we may run them (root). */
export function postfixAvailable(): { ok: true } | { ok: false; why: string } {
  for (const program of ['postfix', 'postconf', 'postqueue', 'swaks']) {
    if (spawnSync('which', [program]).status !== 0) return { ok: false, why: `${program} is not installed` };
  }
  if (!existsSync('/etc/postfix/master.cf')) return { ok: false, why: '/etc/postfix/master.cf is missing' };
  if (process.getuid?.() !== 0) {
    return {
      ok: false,
      why: 'a private Postfix instance needs root (its folders belong to the postfix user)',
    };
  }
  return { ok: true };
}

/**
 * Starts a private instance. `saslPort` and `milterPort`: the relay agent's SMTP AUTH and milter
 * listeners, with the main.cf lines docs/operator-guide.md gives (AUTH without TLS here: loopback only).
 * `extra`: main.cf settings added to, or overriding, the ones below (e.g.
 * `smtp_line_length_limit`).
 */
export async function startPostfix(options: {
  policyPort: number;
  relayPort: number;
  saslPort?: number;
  milterPort?: number;
  extra?: Record<string, string>;
}): Promise<void> {
  if (instance) stopPostfix();
  const agent: Record<string, string> = {};
  if (options.saslPort) {
    Object.assign(agent, {
      smtpd_sasl_type: 'dovecot',
      smtpd_sasl_path: `inet:127.0.0.1:${options.saslPort}`,
      smtpd_sasl_auth_enable: 'yes',
      smtpd_tls_auth_only: 'no',
    });
  }
  if (options.milterPort) {
    Object.assign(agent, {
      smtpd_milters: `inet:127.0.0.1:${options.milterPort}`,
      non_smtpd_milters: '$smtpd_milters',
      milter_default_action: 'tempfail',
      disable_mime_output_conversion: 'yes',
      local_header_rewrite_clients: 'permit_mynetworks, permit_sasl_authenticated',
      // The agent signs as Postfix will fold long lines (SMTP_LINE_LENGTH_LIMIT, default 990).
      smtp_line_length_limit: '990',
    });
  }
  const runId = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'postfix-test-'));
  const current: Instance = {
    dir,
    configDir: join(dir, 'etc'),
    port: await freePort(),
    // maillog_file must stay under /var/log: another prefix makes `postfix check` fail.
    logFile: `/var/log/postfix-test-${runId}.log`,
    started: false,
  };
  instance = current;
  try {
    // The postfix user must be able to traverse the folder, and own data_directory.
    chmodSync(dir, 0o755);
    for (const sub of ['etc', 'spool', 'lib']) mkdirSync(join(dir, sub));
    execFileSync('chown', ['postfix', join(dir, 'lib')]);
    // master.cf as installed, with the smtp inet service moved from port 25 to ours.
    const master = readFileSync('/etc/postfix/master.cf', 'utf8');
    const moved = master.replace(/^smtp(\s+inet\s)/m, `${current.port}$1`);
    if (moved === master) throw new Error('/etc/postfix/master.cf has no "smtp inet" service to move');
    writeFileSync(join(current.configDir, 'master.cf'), moved);
    const settings: Record<string, string> = {
      compatibility_level: '3.6',
      queue_directory: join(dir, 'spool'),
      data_directory: join(dir, 'lib'),
      multi_instance_name: 'postfix-test',
      // Lines named as the stock Postfix names them (`postfix/smtpd[…]`), not after the instance.
      syslog_name: 'postfix',
      maillog_file: current.logFile,
      inet_interfaces: '127.0.0.1',
      inet_protocols: 'ipv4',
      myhostname: 'relay.test',
      mydestination: '',
      // No local delivery: without this, smtpd warns that NIS is not set up.
      alias_maps: '',
      relayhost: `[127.0.0.1]:${options.relayPort}`,
      mynetworks: '127.0.0.0/8',
      smtp_tls_security_level: 'none',
      // The relay agent's test sends a 25 MB message.
      message_size_limit: '30000000',
      smtpd_relay_restrictions: `check_policy_service inet:127.0.0.1:${options.policyPort}, reject`,
      // One recipient of an open transaction refused by Postfix itself: logged as `QID: reject: RCPT`.
      smtpd_recipient_restrictions: 'reject_non_fqdn_recipient',
      // Answers of the policy service are not cached between tests' messages.
      smtpd_policy_service_reuse_count_limit: '1',
      ...agent,
      ...options.extra,
    };
    writeFileSync(
      join(current.configDir, 'main.cf'),
      Object.entries(settings)
        .map(([name, value]) => `${name} = ${value}\n`)
        .join(''),
    );
    execFileSync('postfix', ['-c', current.configDir, 'start'], { stdio: 'pipe' });
    current.started = true;
    await waitForPort(current.port);
  } catch (error) {
    stopPostfix();
    throw error;
  }
}

/** Stops the private instance and removes its folder and its log file. */
export function stopPostfix(): void {
  const current = instance;
  if (!current) return;
  instance = undefined;
  if (current.started) spawnSync('postfix', ['-c', current.configDir, 'stop'], { stdio: 'ignore' });
  rmSync(current.dir, { recursive: true, force: true });
  rmSync(current.logFile, { force: true });
}

/**
 * Stops the running instance's daemons (`postfix stop`: master and its smtpd processes, so open
 * connections close) and resolves once nothing listens on its port; its folder, queue and log file
 * stay for `resumePostfix`. Asynchronous: a relay agent in this very process keeps answering.
 */
export async function pausePostfix(): Promise<void> {
  const current = instance;
  if (!current?.started) throw new Error('no Postfix instance runs: call startPostfix first');
  await run('postfix', ['-c', current.configDir, 'stop']);
  current.started = false;
  await waitForPort(current.port, false);
}

/** Starts a paused instance again, on the same port with the same queue and log file. */
export async function resumePostfix(): Promise<void> {
  const current = instance;
  if (!current) throw new Error('no Postfix instance: call startPostfix first');
  if (current.started) return;
  await run('postfix', ['-c', current.configDir, 'start']);
  current.started = true;
  await waitForPort(current.port);
}

/** Asks the instance to deliver its queue now instead of at its next scan. */
export function flushQueue(): void {
  if (instance) spawnSync('postqueue', ['-c', instance.configDir, '-f']);
}

export interface SwaksResult {
  code: number | null;
  /** swaks' transcript (what the client sent and what Postfix answered). */
  transcript: string;
}

/**
 * Sends one message with swaks to the private instance on 127.0.0.1 (`to`: one address, or several
 * separated by commas; `extra`: more swaks options). Asynchronous on purpose: the policy
 * server answering Postfix may run in this very process.
 */
export function swaks(from: string, to: string, subject: string, extra: string[] = []): Promise<SwaksResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'swaks',
      [
        '--server',
        `127.0.0.1:${postfixPort()}`,
        '--from',
        from,
        '--to',
        to,
        '--header',
        `Subject: ${subject}`,
        '--body',
        'Hello from the relay test.',
        '--timeout',
        '20',
        ...extra,
        // swaks asks on its terminal for what it lacks (an empty --from): no stdin, no waiting.
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let transcript = '';
    child.stdout.on('data', (d: Buffer) => (transcript += d.toString()));
    child.stderr.on('data', (d: Buffer) => (transcript += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, transcript }));
  });
}

/** A port nothing listens on now (the kernel's pick), for the instance's smtpd. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

async function waitForPort(port: number, listening = true): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open === listening) return;
    if (Date.now() > deadline)
      throw new Error(`Postfix ${listening ? 'does not listen' : 'still listens'} on port ${port}`);
    // A peer: Postfix's master daemon, detached by `postfix start`, tells no one when it listens
    // (or, stopped, when its children are gone); trying to connect is the only way to know, every 200 ms.
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * What the tests must never change of the machine's own Postfix: its configuration files, the
 * messages in its queue and whether it runs (compared before and after a run).
 */
export function machinePostfixState(): {
  mainCf: string | null;
  masterCf: string | null;
  queued: Record<string, string[]>;
  running: boolean;
} {
  const digest = (file: string) =>
    existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : null;
  const queued: Record<string, string[]> = {};
  for (const queue of ['maildrop', 'incoming', 'active', 'deferred', 'hold']) {
    const dir = join('/var/spool/postfix', queue);
    queued[queue] = existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).sort() : [];
  }
  return {
    mainCf: digest('/etc/postfix/main.cf'),
    masterCf: digest('/etc/postfix/master.cf'),
    queued,
    running: spawnSync('postfix', ['status'], { stdio: 'ignore' }).status === 0,
  };
}

/** Runs a command to its end without blocking the event loop; rejects with its output when it fails. */
function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, (error, stdout, stderr) =>
      error
        ? reject(new Error(`${command} ${args.join(' ')}: ${error.message}\n${stdout}${stderr}`))
        : resolve(),
    );
  });
}
