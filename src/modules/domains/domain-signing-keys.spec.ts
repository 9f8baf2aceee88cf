import { Repository } from 'typeorm';
import { EncryptionService } from '../../common/crypto/encryption.service';
import type { ChangeNotices } from '../../database/change-notices';
import { AppConfig } from '../../config/app-config';
import { DomainEvents } from './domain-events';
import { DomainSigningKeys } from './domain-signing-keys';
import { Domain } from './entities/domain.entity';

describe('DomainSigningKeys', () => {
  const encryption = new EncryptionService({ encryptionKey: Buffer.alloc(32, 7) } as AppConfig);
  let rows: Map<string, Partial<Domain>>;
  let reads: number;
  let keys: DomainSigningKeys;
  let events: DomainEvents;
  let reconnected: () => void;

  beforeEach(() => {
    rows = new Map([
      ['acme.test', { id: 1, dkimSelector: 'rs202611', dkimPrivateKey: encryption.encrypt('PEM OF ACME') }],
    ]);
    reads = 0;
    const repository = {
      findOne: ({ where }: { where: { name: string; status: string } }) => {
        reads += 1;
        expect(where.status).toBe('verified');
        return Promise.resolve(rows.get(where.name) ?? null);
      },
    } as unknown as Repository<Domain>;
    events = new DomainEvents(undefined as never);
    const notices = {
      onReconnect: (handler: () => void) => {
        reconnected = handler;
        return () => undefined;
      },
    } as unknown as ChangeNotices;
    keys = new DomainSigningKeys(repository, encryption, events, notices);
  });

  afterEach(() => keys.onModuleDestroy());

  it('returns the selector and the decrypted key of a verified domain, read once', async () => {
    expect(await keys.signingKey('acme.test')).toEqual({
      selector: 'rs202611',
      privateKeyPem: 'PEM OF ACME',
    });
    expect(await keys.signingKey('acme.test')).toEqual({
      selector: 'rs202611',
      privateKeyPem: 'PEM OF ACME',
    });
    expect(await keys.signingKey('other.test')).toBeNull();
    expect(reads).toBe(2);
  });

  it('forgets a domain when it changes (unverified, deleted), and does not cache a read overtaken by a change', async () => {
    await keys.signingKey('acme.test');
    rows.delete('acme.test');
    events.emit({ companyId: 1, name: 'acme.test' });
    expect(await keys.signingKey('acme.test')).toBeNull();

    rows.set('acme.test', { id: 1, dkimSelector: 'rs2', dkimPrivateKey: encryption.encrypt('NEW PEM') });
    events.emit({ companyId: 1, name: 'acme.test' });
    const racing = keys.signingKey('acme.test'); // reads the row now
    rows.delete('acme.test');
    events.emit({ companyId: 1, name: 'acme.test' });
    expect(await racing).toEqual({ selector: 'rs2', privateKeyPem: 'NEW PEM' });
    expect(await keys.signingKey('acme.test')).toBeNull();
  });

  it('shares one read among concurrent calls, and forgets everything when the notices reconnect', async () => {
    const [a, b] = await Promise.all([keys.signingKey('acme.test'), keys.signingKey('acme.test')]);
    expect(a).toEqual(b);
    expect(reads).toBe(1);
    rows.delete('acme.test');
    expect(await keys.signingKey('acme.test')).not.toBeNull(); // cached: no change was heard
    reconnected(); // the notices' connection came back: changes meanwhile reached nobody
    expect(await keys.signingKey('acme.test')).toBeNull();
    expect(reads).toBe(2);
  });
});
