import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Job } from './job.decorator';
import { JobRegistry } from './job-registry';
import { JobRegistryModule } from './job-registry.module';

@Injectable()
class Payments {
  calls: string[] = [];

  @Job('expire-things')
  expire(now = 'default'): Promise<number> {
    this.calls.push(`expire:${now}`);
    return Promise.resolve(2);
  }

  @Job('retry-callbacks', { shared: true })
  retry(): Promise<number> {
    this.calls.push('payments');
    return Promise.resolve(1);
  }

  notAJob(): Promise<number> {
    return Promise.resolve(99);
  }
}

@Injectable()
class Batches {
  calls: string[] = [];

  @Job('retry-callbacks', { shared: true })
  retry(): Promise<number> {
    this.calls.push('batches');
    return Promise.resolve(4);
  }

  @Job('hourly-but-not', { cron: '0 */5 * * * *' })
  custom(): Promise<number> {
    return Promise.resolve(0);
  }
}

@Injectable()
class Duplicate {
  @Job('expire-things')
  again(): Promise<number> {
    return Promise.resolve(0);
  }
}

@Module({ providers: [Payments, Batches] })
class AreaModule {}

describe('JobRegistry: the @Job methods of every provider', () => {
  it('registers each @Job method once, calls it on its instance with no argument, and sums shared parts', async () => {
    const ref = await Test.createTestingModule({ imports: [JobRegistryModule, AreaModule] }).compile();
    await ref.init();
    const registry = ref.get(JobRegistry);
    expect(registry.names().sort()).toEqual(['expire-things', 'hourly-but-not', 'retry-callbacks']);
    expect(registry.get('hourly-but-not')?.cron).toBe('0 */5 * * * *');
    expect(registry.get('expire-things')?.cron).toBeUndefined();

    await expect(registry.get('expire-things')!.run()).resolves.toBe(2);
    await expect(registry.get('retry-callbacks')!.run()).resolves.toBe(5);
    expect(ref.get(Payments).calls).toEqual(['expire:default', 'payments']);
    expect(ref.get(Batches).calls).toEqual(['batches']);
    await ref.close();
  });

  it('refuses two whole jobs of one name', async () => {
    const ref = await Test.createTestingModule({
      imports: [JobRegistryModule, AreaModule],
      providers: [Duplicate],
    }).compile();
    await expect(ref.init()).rejects.toThrow('Job expire-things is registered twice');
  });

  it('refuses a shared part for a job registered whole (and the reverse)', () => {
    const registry = new JobRegistry(undefined as never, undefined as never, undefined as never);
    registry.register({ name: 'whole', run: () => Promise.resolve(0) });
    expect(() => registry.contribute('whole', () => Promise.resolve(0))).toThrow(
      'Job whole is registered twice',
    );
    registry.contribute('parts', () => Promise.resolve(0));
    expect(() => registry.register({ name: 'parts', run: () => Promise.resolve(0) })).toThrow(
      'Job parts is registered twice',
    );
  });
});
