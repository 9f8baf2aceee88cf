/**
 * The personalised setup scripts of integrations.md ("Mailbox-suite setup script"), as pure
 * functions of their values. Every value stands in a PowerShell single-quoted string, so no
 * domain, group or name can end its string: see `psQuote`.
 */

export type ScriptSuite = 'microsoft365' | 'google-workspace';

export interface SetupScriptValues {
  /** RELAY_NAME: names the connector (`<name> relay`) and the rule (`<name> route`). */
  relayName: string;
  smartHost: string;
  tlsDomain: string;
  relayUsername: string;
  /** The company's verified sender domains (punycode). */
  domains: string[];
  /** M365 distribution group the rule is scoped to; every sender of the domains when null. */
  groupName: string | null;
}

export interface SetupScript {
  filename: string;
  content: string;
}

/**
 * The characters PowerShell ends a single-quoted string with: the apostrophe and the
 * typographic single quotes U+2018–U+201B. Inside such a string each is written twice.
 */
const PS_SINGLE_QUOTES = /['\u2018\u2019\u201A\u201B]/g;

/** `value` as a PowerShell single-quoted string literal. */
export function psQuote(value: string): string {
  return `'${value.replace(PS_SINGLE_QUOTES, (q) => q + q)}'`;
}

/** Characters refused in a value saved for a script: line breaks and other control characters. */
export const SCRIPT_UNSAFE = /[\p{Cc}\u2028\u2029]/u;

export function setupScript(suite: ScriptSuite, values: SetupScriptValues): SetupScript {
  return suite === 'microsoft365'
    ? { filename: `relay-setup-${values.relayUsername}.ps1`, content: microsoft365Script(values) }
    : { filename: `relay-setup-${values.relayUsername}.txt`, content: googleWorkspaceText(values) };
}

/** Exchange Online PowerShell: safe to run twice (it replaces what an earlier run made). */
export function microsoft365Script(v: SetupScriptValues): string {
  const connector = psQuote(`${v.relayName} relay`);
  const rule = psQuote(`${v.relayName} route`);
  const lines = [
    `# Relay setup for Microsoft 365 (Exchange Online), relay account ${v.relayUsername}.`,
    '# Safe to run more than once: it replaces the connector and the rule an earlier run made.',
    "$ErrorActionPreference = 'Stop'",
    '',
  ];
  if (v.domains.length === 0) {
    lines.push(
      `throw ${psQuote('No verified sender domain yet: verify a domain in the relay dashboard, then download this script again.')}`,
      '',
    );
  }
  const scope = v.groupName === null ? '' : ` -FromMemberOf ${psQuote(v.groupName)}`;
  const domains = v.domains.map(psQuote).join(',');
  lines.push(
    '# 1. Connect to Exchange Online unless this session already is.',
    '$connected = $false',
    "try { $connected = @(Get-ConnectionInformation -ErrorAction Stop | Where-Object { $_.State -eq 'Connected' }).Count -gt 0 } catch { }",
    'if (-not $connected) { Connect-ExchangeOnline }',
    '',
    '# 2. Remove the rule and the connector of an earlier run (the rule first: it names the connector).',
    `if (Get-TransportRule -Identity ${rule} -ErrorAction SilentlyContinue) {`,
    `  Remove-TransportRule -Identity ${rule} -Confirm:$false`,
    '}',
    `if (Get-OutboundConnector -Identity ${connector} -ErrorAction SilentlyContinue) {`,
    `  Remove-OutboundConnector -Identity ${connector} -Confirm:$false`,
    '}',
    '',
    '# 3. The outbound connector to the relay.',
    `New-OutboundConnector -Name ${connector} -ConnectorType Partner -UseMXRecord $false -SmartHosts ${psQuote(v.smartHost)} -TlsSettings DomainValidation -TlsDomain ${psQuote(v.tlsDomain)} -IsTransportRuleScoped $true -Enabled $true | Out-Null`,
    '',
    '# 4. The rule that routes the sender domains through the connector.',
    `New-TransportRule -Name ${rule} -FromScope InOrganization${scope} -SenderDomainIs ${domains} -RouteMessageOutboundConnector ${connector} -StopRuleProcessing $true | Out-Null`,
    '',
    '# 5. What was done, and how to test it.',
    `Write-Host 'Created the outbound connector' ${connector} 'to' ${psQuote(v.smartHost)}`,
    `Write-Host 'Created the transport rule' ${rule} 'for' ${v.domains.map(psQuote).join(', ') || "''"}`,
  );
  if (v.groupName !== null) lines.push(`Write-Host 'Only for members of' ${psQuote(v.groupName)}`);
  lines.push(
    `Write-Host 'Test: send a message from one of these domains to an outside address; its Received headers name' ${psQuote(v.smartHost)}`,
    '',
  );
  return lines.join('\r\n');
}

/** The Google Workspace steps as text, with the company's values filled in. */
export function googleWorkspaceText(v: SetupScriptValues): string {
  const domains = v.domains.length
    ? v.domains.map((d) => `   - ${d}`).join('\n')
    : '   (none verified yet: verify a domain in the relay dashboard first)';
  return [
    'Relay setup for Google Workspace',
    `Relay account: ${v.relayUsername}`,
    '',
    '1. Sign in to the Google Admin console (https://admin.google.com) as a super administrator.',
    '2. Open Apps > Google Workspace > Gmail > Routing.',
    `3. Under "Outbound gateway", enter: ${v.smartHost}`,
    '4. Tick "Require TLS" for the outbound gateway, then Save.',
    '5. Google applies the change within an hour (at most 24 hours).',
    '6. The relay accepts the mail of these verified sender domains:',
    domains,
    `7. Test: send a message from one of these domains to an outside address; its Received headers name ${v.smartHost}.`,
    '',
  ].join('\n');
}
