import { MAILBOX_PROVIDERS, providerOf, relayHost } from './mailbox-providers';

const ELSEWHERE = 'mx.example.net[192.0.2.7]:25';

describe('providerOf: by the recipient domain', () => {
  it.each([
    ['jo@gmail.com', 'gmail'],
    ['jo@googlemail.com', 'gmail'],
    ['jo@outlook.com', 'microsoft'],
    ['jo@hotmail.com', 'microsoft'],
    ['jo@hotmail.co.uk', 'microsoft'],
    ['jo@hotmail.fr', 'microsoft'],
    ['jo@live.com', 'microsoft'],
    ['jo@live.co.uk', 'microsoft'],
    ['jo@live.nl', 'microsoft'],
    ['jo@msn.com', 'microsoft'],
    ['jo@yahoo.com', 'yahoo'],
    ['jo@yahoo.co.uk', 'yahoo'],
    ['jo@yahoo.fr', 'yahoo'],
    ['jo@yahoo.com.au', 'yahoo'],
    ['jo@aol.com', 'yahoo'],
    ['jo@ymail.com', 'yahoo'],
    ['jo@icloud.com', 'apple'],
    ['jo@me.com', 'apple'],
    ['jo@mac.com', 'apple'],
  ] as const)('%s → %s, whatever the next hop', (recipient, provider) => {
    expect(providerOf(recipient, ELSEWHERE)).toBe(provider);
    expect(providerOf(recipient, null)).toBe(provider);
  });

  it('reads the domain in any case', () => {
    expect(providerOf('Jo.Smith@GMAIL.COM', null)).toBe('gmail');
    expect(providerOf('JO@Hotmail.Co.UK', null)).toBe('microsoft');
    expect(providerOf('jo@YAHOO.FR', 'none')).toBe('yahoo');
    expect(providerOf('jo@iCloud.com', null)).toBe('apple');
  });

  it("prefers the recipient's own domain to the next hop", () => {
    expect(providerOf('jo@gmail.com', 'acme-com.mail.protection.outlook.com[52.101.68.10]:25')).toBe('gmail');
  });

  it('does not take look-alike domains for the providers', () => {
    for (const recipient of [
      'jo@notgmail.com',
      'jo@gmail.com.evil.example',
      'jo@mail.gmail.com',
      'jo@myhotmail.com',
      'jo@outlook.com.example',
      'jo@yahoo.example.org',
      'jo@icloud.example',
      'jo@acme.example',
      'not-an-address',
      '',
    ])
      expect([recipient, providerOf(recipient, null)]).toEqual([recipient, 'other']);
  });
});

describe('providerOf: by the next hop', () => {
  it.each([
    ['gmail-smtp-in.l.google.com[142.250.4.27]:25', 'gmail'],
    ['aspmx.l.google.com[142.250.102.26]:25', 'gmail'],
    ['alt1.aspmx.l.google.com[2a00:1450:400c:c0a::1a]:25', 'gmail'],
    ['aspmx2.googlemail.com[142.250.150.27]:25', 'gmail'],
    ['acme-com.mail.protection.outlook.com[52.101.68.10]:25', 'microsoft'],
    ['outlook-com.olc.protection.outlook.com[52.101.42.3]:25', 'microsoft'],
    ['mta5.am0.yahoodns.net[67.195.204.77]:25', 'yahoo'],
    ['mx-aol.mail.gm0.yahoodns.net[67.195.204.75]:25', 'yahoo'],
    ['mx01.mail.icloud.com[17.57.154.33]:25', 'apple'],
    ['MX01.MAIL.ICLOUD.COM[17.57.154.33]:25', 'apple'],
    ['ASPMX.L.GOOGLE.COM[142.250.102.26]:25', 'gmail'],
    ['aspmx.l.google.com:25', 'gmail'],
    ['aspmx.l.google.com.[142.250.102.26]:25', 'gmail'],
    ['aspmx.l.google.com', 'gmail'],
  ] as const)('a company domain reached through %s → %s', (relay, provider) => {
    expect(providerOf('jo@acme.example', relay)).toBe(provider);
  });

  it.each([
    ['none'],
    ['NONE'],
    [''],
    [ELSEWHERE],
    ['mx.google.com.evil.example[192.0.2.7]:25'],
    ['evilgoogle.com[192.0.2.7]:25'],
    ['outlook.com[52.101.42.3]:25'],
    ['mail.outlook.com.example[192.0.2.7]:25'],
    ['local'],
    ['private/dovecot-lmtp'],
  ])('is other through %j', (relay) => {
    expect(providerOf('jo@acme.example', relay)).toBe('other');
  });

  it('is other without a next hop', () => {
    expect(providerOf('jo@acme.example', null)).toBe('other');
  });
});

describe('relayHost', () => {
  it('keeps the host name of a relay= field, in lower case', () => {
    expect(relayHost('Gmail-SMTP-In.L.Google.com[142.250.4.27]:25')).toBe('gmail-smtp-in.l.google.com');
    expect(relayHost('mx.example.net[2001:db8::25]:25')).toBe('mx.example.net');
    expect(relayHost('none')).toBeNull();
    expect(relayHost(null)).toBeNull();
  });
});

it('lists the providers of the contract', () => {
  expect(MAILBOX_PROVIDERS).toEqual(['gmail', 'microsoft', 'yahoo', 'apple', 'other']);
});
