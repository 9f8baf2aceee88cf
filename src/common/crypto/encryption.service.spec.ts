import { AppConfig } from '../../config/app-config';
import { EncryptionService } from './encryption.service';

describe('EncryptionService', () => {
  const config = AppConfig.fromEnv(
    { ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') },
    { warn: () => undefined },
  );
  const service = new EncryptionService(config);

  it('round-trips and never repeats a ciphertext', () => {
    const a = service.encrypt('secret token');
    const b = service.encrypt('secret token');
    expect(a).not.toBe(b);
    expect(a).not.toContain('secret');
    expect(service.decrypt(a)).toBe('secret token');
  });

  it('refuses a tampered ciphertext', () => {
    const sealed = service.encrypt('secret token');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('another value').toString('base64url');
    expect(() => service.decrypt(parts.join('.'))).toThrow();
  });

  it('refuses a ciphertext made with another key', () => {
    const other = new EncryptionService(
      AppConfig.fromEnv(
        { ENCRYPTION_KEY: Buffer.alloc(32, 2).toString('base64') },
        { warn: () => undefined },
      ),
    );
    expect(() => service.decrypt(other.encrypt('x'))).toThrow();
  });
});
