import { RebuildTargets } from './rebuild-targets';

describe('RebuildTargets', () => {
  const a = { host: 'relay1', queueId: 'AAA' };
  const b = { host: 'relay1', queueId: 'BBB' };
  const line = (queue: typeof a, recipient: string) => ({ ...queue, recipient });

  it('asks for the recipients named, or for every one once the whole queue is asked', () => {
    const targets = new RebuildTargets();
    targets.recipient(a, 'x@example.net');
    targets.recipient(b, 'y@example.net');
    targets.wholeQueue(b);
    targets.recipient(b, 'z@example.net');
    expect(targets.queues).toEqual([a, b]);
    expect(targets.wants(line(a, 'x@example.net'))).toBe(true);
    expect(targets.wants(line(a, 'other@example.net'))).toBe(false);
    expect(targets.wants(line(b, 'anyone@example.net'))).toBe(true);
    expect(targets.wants({ host: 'relay1', queueId: null, recipient: 'x@example.net' })).toBe(false);
    expect([...(targets.recipientsOf(a) ?? [])]).toEqual(['x@example.net']);
    expect(targets.recipientsOf(b)).toBeNull();
  });

  it('widens a copy to whole queues, the caller’s targets left as they were', () => {
    const targets = new RebuildTargets();
    targets.recipient(a, 'x@example.net');
    const wide = targets.withWholeQueues([a]);
    wide.recipient(b, 'y@example.net');
    expect(wide.recipientsOf(a)).toBeNull();
    expect(wide.wants(line(a, 'other@example.net'))).toBe(true);
    expect([...(targets.recipientsOf(a) ?? [])]).toEqual(['x@example.net']);
    expect(targets.queues).toEqual([a]);
    // Recipient sets are copied, not shared.
    const copy = targets.withWholeQueues([]);
    copy.recipient(a, 'new@example.net');
    expect(targets.wants(line(a, 'new@example.net'))).toBe(false);
  });
});
