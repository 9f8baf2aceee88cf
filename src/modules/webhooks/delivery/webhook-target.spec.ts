import {
  checkWebhookUrl,
  isPublicAddress,
  refusedAddressReason,
  type WebhookLookup,
  type WebhookUrlOptions,
} from './webhook-target';

const strict: WebhookUrlOptions = { allowHttp: false, allowPrivateTargets: false };

/** A resolver that knows a few names and fails for the rest, as DNS does for an unknown name. */
function fakeLookup(names: Record<string, string[]>): WebhookLookup {
  return (hostname) => {
    const addresses = names[hostname];
    if (!addresses)
      return Promise.reject(
        Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
      );
    return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
}

const lookup = fakeLookup({
  'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'internal.example.com': ['10.0.0.1'],
  'half.example.com': ['93.184.216.34', '192.168.1.20'],
  'metadata.example.com': ['169.254.169.254'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
});

describe('refusedAddressReason / isPublicAddress', () => {
  it.each([
    ['0.0.0.0', 'an unspecified address'],
    ['0.1.2.3', 'a "this network" address'],
    ['10.0.0.1', 'a private address'],
    ['10.255.255.255', 'a private address'],
    ['100.64.0.1', 'a shared (CGNAT) address'],
    ['100.127.255.254', 'a shared (CGNAT) address'],
    ['127.0.0.1', 'a loopback address'],
    ['127.255.0.9', 'a loopback address'],
    ['169.254.169.254', 'a link-local address'],
    ['172.16.0.1', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.0.0.8', 'an IETF protocol assignment address'],
    ['192.0.2.1', 'a documentation address'],
    ['192.88.99.1', 'a 6to4 relay anycast address'],
    ['192.168.1.1', 'a private address'],
    ['198.18.0.1', 'a benchmarking address'],
    ['198.19.255.255', 'a benchmarking address'],
    ['198.51.100.7', 'a documentation address'],
    ['203.0.113.7', 'a documentation address'],
    ['224.0.0.1', 'a multicast address'],
    ['239.255.255.250', 'a multicast address'],
    ['240.0.0.1', 'a reserved address'],
    ['255.255.255.255', 'a broadcast address'],
    ['::', 'an unspecified address'],
    ['::1', 'a loopback address'],
    ['fe80::1', 'a link-local address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['febf::1', 'a link-local address'],
    ['fc00::1', 'a unique-local address'],
    ['fd12:3456::1', 'a unique-local address'],
    ['fec0::1', 'a site-local address'],
    ['ff02::1', 'a multicast address'],
    ['2001:db8::1', 'a documentation address'],
    ['3fff::1', 'a documentation address'],
    ['2001:2::1', 'a benchmarking address'],
    ['2001:0:4136:e378::1', 'a Teredo address'],
    ['100::1', 'a discard-only address'],
    ['4000::1', 'a reserved address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:7f00:1', 'a loopback address'],
    ['::ffff:10.0.0.1', 'a private address'],
    ['::ffff:169.254.169.254', 'a link-local address'],
    ['::ffff:0:a9fe:a9fe', 'a link-local address'],
    ['::127.0.0.1', 'a loopback address'],
    ['::5db8:d822', 'a deprecated IPv4-compatible address'],
    ['64:ff9b::127.0.0.1', 'a loopback address'],
    ['64:ff9b::a00:1', 'a private address'],
    ['64:ff9b:1::a00:1', 'a local-use NAT64 address'],
    ['2002:7f00:1::1', 'a loopback address'],
    ['2002:c0a8:101::1', 'a private address'],
    ['localhost', 'not an IP address'],
    ['127.1', 'not an IP address'],
    ['', 'not an IP address'],
  ])('refuses %s as %s', (address, reason) => {
    expect(refusedAddressReason(address)).toBe(reason);
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    '93.184.216.34',
    '1.1.1.1',
    '8.8.8.8',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:2800:220:1:248:1893:25c8:1946',
    '2a00:1450:4001:81b::200e',
    '::ffff:93.184.216.34',
    '64:ff9b::5db8:d822',
    '2002:5db8:d822::1',
  ])('accepts the public address %s', (address) => {
    expect(refusedAddressReason(address)).toBeNull();
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('checkWebhookUrl', () => {
  const longUrl = (length: number) => {
    const prefix = 'https://hooks.example.com/';
    return prefix + 'a'.repeat(length - prefix.length);
  };

  it.each<[string, string]>([
    ['http://hooks.example.com/events', 'Webhook URL must use https'],
    ['ftp://hooks.example.com/events', 'Webhook URL must use https'],
    ['ws://hooks.example.com/events', 'Webhook URL must use https'],
    ['hooks.example.com/events', 'Webhook URL is not a valid URL'],
    ['https://', 'Webhook URL is not a valid URL'],
    [longUrl(2049), 'Webhook URL must be at most 2048 characters'],
    ['https://user:pw@hooks.example.com/', 'Webhook URL must not contain credentials'],
    ['https://user@hooks.example.com/', 'Webhook URL must not contain credentials'],
    ['https://:pw@hooks.example.com/', 'Webhook URL must not contain credentials'],
    ['https://127.0.0.1/', 'Webhook URL points to a loopback address (127.0.0.1)'],
    ['https://2130706433/', 'Webhook URL points to a loopback address (127.0.0.1)'],
    ['https://0x7f.1/', 'Webhook URL points to a loopback address (127.0.0.1)'],
    ['https://10.0.0.1/', 'Webhook URL points to a private address (10.0.0.1)'],
    ['https://172.16.5.4:8443/', 'Webhook URL points to a private address (172.16.5.4)'],
    ['https://192.168.1.1/', 'Webhook URL points to a private address (192.168.1.1)'],
    [
      'https://169.254.169.254/latest/meta-data/',
      'Webhook URL points to a link-local address (169.254.169.254)',
    ],
    ['https://100.64.0.1/', 'Webhook URL points to a shared (CGNAT) address (100.64.0.1)'],
    ['https://0.0.0.0/', 'Webhook URL points to an unspecified address (0.0.0.0)'],
    ['https://0.1.2.3/', 'Webhook URL points to a "this network" address (0.1.2.3)'],
    ['https://192.0.2.1/', 'Webhook URL points to a documentation address (192.0.2.1)'],
    ['https://198.51.100.1/', 'Webhook URL points to a documentation address (198.51.100.1)'],
    ['https://203.0.113.1/', 'Webhook URL points to a documentation address (203.0.113.1)'],
    ['https://198.18.0.1/', 'Webhook URL points to a benchmarking address (198.18.0.1)'],
    ['https://240.0.0.1/', 'Webhook URL points to a reserved address (240.0.0.1)'],
    ['https://255.255.255.255/', 'Webhook URL points to a broadcast address (255.255.255.255)'],
    ['https://224.0.0.1/', 'Webhook URL points to a multicast address (224.0.0.1)'],
    ['https://[::1]/', 'Webhook URL points to a loopback address (::1)'],
    ['https://[::]/', 'Webhook URL points to an unspecified address (::)'],
    ['https://[fe80::1]/', 'Webhook URL points to a link-local address (fe80::1)'],
    ['https://[fd00::1]/', 'Webhook URL points to a unique-local address (fd00::1)'],
    ['https://[2001:db8::1]/', 'Webhook URL points to a documentation address (2001:db8::1)'],
    ['https://[ff02::1]/', 'Webhook URL points to a multicast address (ff02::1)'],
    ['https://[::ffff:127.0.0.1]/', 'Webhook URL points to a loopback address (::ffff:7f00:1)'],
    ['https://[::ffff:7f00:1]/', 'Webhook URL points to a loopback address (::ffff:7f00:1)'],
    ['https://[::ffff:169.254.169.254]/', 'Webhook URL points to a link-local address (::ffff:a9fe:a9fe)'],
    ['https://[::127.0.0.1]/', 'Webhook URL points to a loopback address (::7f00:1)'],
    ['https://[64:ff9b::10.0.0.1]/', 'Webhook URL points to a private address (64:ff9b::a00:1)'],
    ['https://internal.example.com/', 'Webhook URL resolves to a private address (10.0.0.1)'],
    ['https://half.example.com/', 'Webhook URL resolves to a private address (192.168.1.20)'],
    ['https://metadata.example.com/', 'Webhook URL resolves to a link-local address (169.254.169.254)'],
    ['https://mapped.example.com/', 'Webhook URL resolves to a loopback address (::ffff:127.0.0.1)'],
  ])('refuses %s: %s', async (url, reason) => {
    await expect(checkWebhookUrl(url, { ...strict, lookup })).resolves.toEqual({ ok: false, reason });
  });

  it('names both schemes when http is allowed', async () => {
    await expect(
      checkWebhookUrl('ftp://hooks.example.com/', { ...strict, allowHttp: true }),
    ).resolves.toEqual({
      ok: false,
      reason: 'Webhook URL must use https or http',
    });
  });

  it.each([
    'https://hooks.example.com/events',
    'https://hooks.example.com:8443/events?source=relay',
    'https://93.184.216.34/hook',
    'https://[2606:2800:220:1:248:1893:25c8:1946]/hook',
    longUrl(2048),
    // Not resolvable now (DNS down, record not yet made): every attempt checks what it connects to.
    'https://not-yet.example.com/',
  ])('accepts %s', async (url) => {
    await expect(checkWebhookUrl(url, { ...strict, lookup })).resolves.toEqual({
      ok: true,
      url: new URL(url),
    });
  });

  it.each<[string, Partial<WebhookUrlOptions>]>([
    ['http://hooks.example.com/events', { allowHttp: true }],
    ['https://10.0.0.1/', { allowPrivateTargets: true }],
    ['https://internal.example.com/', { allowPrivateTargets: true }],
    ['http://127.0.0.1:8080/', { allowHttp: true, allowPrivateTargets: true }],
  ])('accepts %s with %j', async (url, options) => {
    const checked = await checkWebhookUrl(url, { ...strict, lookup, ...options });
    expect(checked).toEqual({ ok: true, url: new URL(url) });
  });

  it('refuses localhost through the system resolver', async () => {
    const checked = await checkWebhookUrl('https://localhost/events', strict);
    expect(checked).toEqual({
      ok: false,
      reason: expect.stringMatching(
        /^Webhook URL resolves to a loopback address \((127\.0\.0\.1|::1)\)$/,
      ) as string,
    });
  });

  it('does not resolve the host when private targets are allowed', async () => {
    const neverCalled = jest.fn<ReturnType<WebhookLookup>, Parameters<WebhookLookup>>();
    const checked = await checkWebhookUrl('https://internal.example.com/', {
      ...strict,
      allowPrivateTargets: true,
      lookup: neverCalled,
    });
    expect(checked.ok).toBe(true);
    expect(neverCalled).not.toHaveBeenCalled();
  });
});
