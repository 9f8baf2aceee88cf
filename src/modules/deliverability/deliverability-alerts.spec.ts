import { ALERT_THRESHOLDS, judge, MIN_MESSAGES } from './deliverability-alerts.service';

/** A provider's figures: 1,000 messages in 7 days, all accepted, 500 in the last 24 hours. */
const reading = (over: Partial<Parameters<typeof judge>[0]> = {}): Parameters<typeof judge>[0] => ({
  messages7d: 1000,
  accepted7d: 1000,
  complained7d: 0,
  hard7d: 0,
  hardRules: new Map(),
  messages24h: 500,
  distrust24h: 0,
  distrustRules: new Map(),
  ...over,
});

describe('judge (deliverability.md "Alerts")', () => {
  it.each([
    // kind, figures, value, level, threshold
    ['complaint-rate', { complained7d: 0 }, 0, null, 0.001],
    ['complaint-rate', { complained7d: 1 }, 0.001, 'warning', 0.001],
    ['complaint-rate', { complained7d: 2 }, 0.002, 'warning', 0.001],
    ['complaint-rate', { complained7d: 3 }, 0.003, 'critical', 0.003],
    ['hard-bounce-rate', { hard7d: 19 }, 0.019, null, 0.02],
    ['hard-bounce-rate', { hard7d: 20 }, 0.02, 'warning', 0.02],
    ['hard-bounce-rate', { hard7d: 50 }, 0.05, 'critical', 0.05],
    ['blocked', { distrust24h: 4 }, 0.008, null, 0.01],
    ['blocked', { distrust24h: 5 }, 0.01, 'warning', 0.01],
    ['blocked', { distrust24h: 25 }, 0.05, 'critical', 0.05],
  ] as const)('%s %j → %s %s', (kind, figures, value, level, threshold) => {
    expect(judge(reading(figures), kind)).toMatchObject({ value, level, threshold });
  });

  it('judges nothing below 100 messages in the 7 days, whatever the rate', () => {
    const few = reading({ messages7d: MIN_MESSAGES - 1, accepted7d: 99, messages24h: 99, distrust24h: 99 });
    expect(judge(few, 'blocked')).toMatchObject({ value: 1, level: null });
    expect(judge({ ...few, messages7d: MIN_MESSAGES }, 'blocked')).toMatchObject({
      value: 1,
      level: 'critical',
    });
  });

  it('the complaint rate is over the messages the provider accepted; the blocked rate over the last 24 hours', () => {
    expect(judge(reading({ accepted7d: 500, complained7d: 2 }), 'complaint-rate').value).toBe(0.004);
    expect(judge(reading({ messages24h: 0 }), 'blocked').value).toBe(0);
  });

  it('the sample rule is the most frequent of the kind', () => {
    const hardRules = new Map([
      ['rfc3463-5.1.1', 3],
      ['gmail-no-such-user', 7],
    ]);
    expect(judge(reading({ hard7d: 10, hardRules }), 'hard-bounce-rate').sampleRule).toBe(
      'gmail-no-such-user',
    );
    expect(judge(reading(), 'complaint-rate').sampleRule).toBeNull();
  });

  it('has the contract’s thresholds', () => {
    expect(ALERT_THRESHOLDS).toEqual({
      'complaint-rate': { warning: 0.001, critical: 0.003 },
      'hard-bounce-rate': { warning: 0.02, critical: 0.05 },
      blocked: { warning: 0.01, critical: 0.05 },
    });
  });
});
