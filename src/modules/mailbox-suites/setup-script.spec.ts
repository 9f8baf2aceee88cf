import fc from 'fast-check';
import {
  googleWorkspaceText,
  microsoft365Script,
  psQuote,
  SCRIPT_UNSAFE,
  setupScript,
  SetupScriptValues,
} from './setup-script';

/**
 * `pwsh` cannot be installed here (its packages come from GitHub and Microsoft's repositories,
 * neither reachable), so the scripts are read back with a tokenizer that follows PowerShell's
 * rules for what the generator writes: single-quoted strings end at any of ' ‘ ’ ‚ ‛ unless
 * that quote is doubled (the literal then holds the second one), `#` starts a comment outside
 * strings, and statements end at a line break or `;`.
 */
type Token = { kind: 'string' | 'word'; value: string } | { kind: 'end'; value?: undefined };

const SINGLE_QUOTES = new Set(["'", '\u2018', '\u2019', '\u201A', '\u201B']);

function tokenize(script: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let word = '';
  const flush = () => {
    if (word) tokens.push({ kind: 'word', value: word });
    word = '';
  };
  while (i < script.length) {
    const c = script[i];
    if (SINGLE_QUOTES.has(c)) {
      flush();
      let value = '';
      i++;
      for (;;) {
        if (i >= script.length) throw new Error('unterminated string');
        const s = script[i];
        if (SINGLE_QUOTES.has(s)) {
          if (SINGLE_QUOTES.has(script[i + 1] ?? '')) {
            value += script[i + 1];
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += s;
        i++;
      }
      tokens.push({ kind: 'string', value });
    } else if (c === '#' && !word) {
      while (i < script.length && script[i] !== '\n') i++;
    } else if (c === '\n' || c === ';') {
      flush();
      tokens.push({ kind: 'end' });
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r' || c === ',') {
      flush();
      i++;
    } else {
      word += c;
      i++;
    }
  }
  flush();
  return tokens;
}

/** The statements of a script, each as its tokens; empty statements dropped. */
function statements(script: string): Token[][] {
  const out: Token[][] = [[]];
  for (const t of tokenize(script)) {
    if (t.kind === 'end') out.push([]);
    else out[out.length - 1].push(t);
  }
  return out.filter((s) => s.length);
}

function statementOf(script: string, command: string): Token[] {
  const found = statements(script).filter((s) => s[0].kind === 'word' && s[0].value === command);
  expect(found).toHaveLength(1);
  return found[0];
}

/** The string values after `-name` up to the next parameter. */
function argument(statement: Token[], name: string): string[] {
  const at = statement.findIndex((t) => t.kind === 'word' && t.value === name);
  expect(at).toBeGreaterThan(0);
  const values: string[] = [];
  for (const t of statement.slice(at + 1)) {
    if (t.kind === 'word' && t.value.startsWith('-')) break;
    values.push(t.kind === 'string' ? t.value : `<word ${t.value}>`);
  }
  return values;
}

const values = (over: Partial<SetupScriptValues> = {}): SetupScriptValues => ({
  relayName: 'Relay',
  smartHost: 'smtp.relay.example',
  tlsDomain: 'relay.example',
  relayUsername: 'r-7f3k2q9d',
  domains: ['acme.co.id', 'xn--bcher-kva.example'],
  groupName: null,
  ...over,
});

const HOSTILE = [
  "Sales'; Remove-Mailbox -Identity * -Confirm:$false; '",
  'Sales\u2019; Get-Mailbox #',
  '\u2018\u2019\u201A\u201B',
  "''",
  "'",
  '$(Remove-Item C:\\ -Recurse)',
  '"double" `backtick` @(array)',
  'name # not a comment',
];

describe('psQuote', () => {
  it.each([
    ['plain', "'plain'"],
    ["it's", "'it''s'"],
    ['\u2018a\u2019', "'\u2018\u2018a\u2019\u2019'"],
    ['\u201A\u201B', "'\u201A\u201A\u201B\u201B'"],
    ['', "''"],
  ])('quotes %j as %s', (value, quoted) => {
    expect(psQuote(value)).toBe(quoted);
  });

  it('reads back as exactly the value, whatever it holds', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        const tokens = tokenize(psQuote(value));
        expect(tokens).toEqual([{ kind: 'string', value }]);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('microsoft365Script', () => {
  it('has the steps of integrations.md with the values in single-quoted strings', () => {
    const script = microsoft365Script(values({ groupName: 'Sales team' }));
    expect(statements(script).map((s) => (s[0].kind === 'string' ? `'${s[0].value}'` : s[0].value))).toEqual([
      '$ErrorActionPreference',
      '$connected',
      'try',
      'if',
      'if',
      'Remove-TransportRule',
      '}',
      'if',
      'Remove-OutboundConnector',
      '}',
      'New-OutboundConnector',
      'New-TransportRule',
      'Write-Host',
      'Write-Host',
      'Write-Host',
      'Write-Host',
    ]);
    const connector = statementOf(script, 'New-OutboundConnector');
    expect(argument(connector, '-Name')).toEqual(['Relay relay']);
    expect(argument(connector, '-ConnectorType')).toEqual(['<word Partner>']);
    expect(argument(connector, '-UseMXRecord')).toEqual(['<word $false>']);
    expect(argument(connector, '-SmartHosts')).toEqual(['smtp.relay.example']);
    expect(argument(connector, '-TlsSettings')).toEqual(['<word DomainValidation>']);
    expect(argument(connector, '-TlsDomain')).toEqual(['relay.example']);
    expect(argument(connector, '-IsTransportRuleScoped')).toEqual(['<word $true>']);
    expect(argument(connector, '-Enabled')).toEqual(['<word $true>', '<word |>', '<word Out-Null>']);

    const rule = statementOf(script, 'New-TransportRule');
    expect(argument(rule, '-Name')).toEqual(['Relay route']);
    expect(argument(rule, '-FromScope')).toEqual(['<word InOrganization>']);
    expect(argument(rule, '-FromMemberOf')).toEqual(['Sales team']);
    expect(argument(rule, '-SenderDomainIs')).toEqual(['acme.co.id', 'xn--bcher-kva.example']);
    expect(argument(rule, '-RouteMessageOutboundConnector')).toEqual(['Relay relay']);
    expect(argument(rule, '-StopRuleProcessing')).toEqual(['<word $true>', '<word |>', '<word Out-Null>']);

    expect(argument(statementOf(script, 'Remove-TransportRule'), '-Identity')).toEqual(['Relay route']);
    expect(argument(statementOf(script, 'Remove-OutboundConnector'), '-Identity')).toEqual(['Relay relay']);
    expect(script).toContain('Connect-ExchangeOnline');
  });

  it('scopes the rule to every sender of the domains when there is no group', () => {
    const rule = statementOf(microsoft365Script(values()), 'New-TransportRule');
    expect(rule.some((t) => t.kind === 'word' && t.value === '-FromMemberOf')).toBe(false);
  });

  it('stops at once, saying why, when the company has no verified domain', () => {
    const first = statements(microsoft365Script(values({ domains: [] })))[1];
    expect(first[0]).toEqual({ kind: 'word', value: 'throw' });
    expect(first[1]).toMatchObject({
      kind: 'string',
      value: expect.stringContaining('No verified sender domain'),
    });
  });

  it.each(HOSTILE)('keeps the hostile value %j inside its strings', (hostile) => {
    const script = microsoft365Script(
      values({ groupName: hostile, relayName: hostile, domains: [hostile, 'acme.co.id'] }),
    );
    const plain = microsoft365Script(
      values({ groupName: 'g', relayName: 'n', domains: ['d', 'acme.co.id'] }),
    );
    // The same statements, in the same order, as with harmless values.
    const shape = (s: string) =>
      statements(s).map((st) => st.map((t) => (t.kind === 'word' ? t.value : 'S')).join(' '));
    expect(shape(script)).toEqual(shape(plain));
    const rule = statementOf(script, 'New-TransportRule');
    expect(argument(rule, '-FromMemberOf')).toEqual([hostile]);
    expect(argument(rule, '-Name')).toEqual([`${hostile} route`]);
    expect(argument(rule, '-SenderDomainIs')).toEqual([hostile, 'acme.co.id']);
  });

  it('keeps any group name inside its string (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (group) => {
        const rule = statementOf(microsoft365Script(values({ groupName: group })), 'New-TransportRule');
        expect(argument(rule, '-FromMemberOf')).toEqual([group]);
      }),
      { numRuns: 500 },
    );
  });
});

describe('googleWorkspaceText', () => {
  it('names the outbound gateway, TLS and the verified domains', () => {
    const text = googleWorkspaceText(values());
    expect(text).toContain('Apps > Google Workspace > Gmail > Routing');
    expect(text).toContain('"Outbound gateway", enter: smtp.relay.example');
    expect(text).toContain('Require TLS');
    expect(text).toContain('   - acme.co.id\n   - xn--bcher-kva.example');
    expect(text).toContain('Relay account: r-7f3k2q9d');
  });

  it('says what to do first when no domain is verified', () => {
    expect(googleWorkspaceText(values({ domains: [] }))).toContain('none verified yet');
  });
});

describe('setupScript', () => {
  it('names the attachment after the relay username', () => {
    expect(setupScript('microsoft365', values()).filename).toBe('relay-setup-r-7f3k2q9d.ps1');
    expect(setupScript('google-workspace', values()).filename).toBe('relay-setup-r-7f3k2q9d.txt');
  });
});

describe('SCRIPT_UNSAFE', () => {
  it.each(['a\nb', 'a\rb', 'a\u2028b', 'a\u2029b', 'a\u0000b', 'a\tb'])('refuses %j', (value) => {
    expect(SCRIPT_UNSAFE.test(value)).toBe(true);
  });

  it.each(['Sales team', "O'Brien", 'Vertrieb – Süd', '营销'])('accepts %j', (value) => {
    expect(SCRIPT_UNSAFE.test(value)).toBe(false);
  });
});
