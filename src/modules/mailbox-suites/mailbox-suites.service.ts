import { Injectable } from '@nestjs/common';
import { ConflictError, NotFoundError } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import { CompanyMailboxSettings, CompanyMailboxSettingsService } from '../companies/company-mailbox-settings';
import { DomainLookup } from '../domains/domain-lookup';
import { MailboxSuiteDto, SaveMailboxSuiteDto, ScriptPreviewDto } from './dto/mailbox-suite.dto';
import { ScriptSuite, setupScript, SetupScriptValues } from './setup-script';

/** A script token is 32 random bytes in base64url: anything else cannot be one. */
const SCRIPT_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * A company's mailbox-suite setup: its choice, the steps to follow, and the personalised
 * script served at its secret URL.
 */
@Injectable()
export class MailboxSuitesService {
  constructor(
    private readonly settings: CompanyMailboxSettingsService,
    private readonly domains: DomainLookup,
    private readonly config: AppConfig,
  ) {}

  async view(companyId: number): Promise<MailboxSuiteDto> {
    const settings = await this.settings.of(companyId);
    const values = await this.valuesOf(settings);
    return {
      suite: settings.mailboxSuite,
      groupName: settings.mailboxGroupName,
      smartHost: values.smartHost,
      tlsDomain: values.tlsDomain,
      relayUsername: settings.relayUsername,
      domains: values.domains,
      scriptUrl: settings.scriptUrl,
      steps: stepsFor(settings, values),
    };
  }

  async save(companyId: number, dto: SaveMailboxSuiteDto): Promise<MailboxSuiteDto> {
    await this.settings.save(companyId, dto.suite, dto.groupName || null);
    return this.view(companyId);
  }

  rotateScriptToken(companyId: number): Promise<string> {
    return this.settings.rotateScriptToken(companyId, null);
  }

  async preview(companyId: number, suite?: ScriptSuite): Promise<ScriptPreviewDto> {
    return this.scriptOf(await this.settings.of(companyId), suite);
  }

  /** The script behind a public URL; 404 for a token that is not a company's current one. */
  async publicScript(token: string, suite?: ScriptSuite): Promise<ScriptPreviewDto> {
    const settings = SCRIPT_TOKEN.test(token) ? await this.settings.byScriptToken(token) : null;
    if (!settings) throw new NotFoundError('Script not found');
    return this.scriptOf(settings, suite);
  }

  private async scriptOf(settings: CompanyMailboxSettings, suite?: ScriptSuite): Promise<ScriptPreviewDto> {
    const chosen = suite ?? (settings.mailboxSuite === 'none' ? null : settings.mailboxSuite);
    if (!chosen) {
      throw new ConflictError(
        'No mailbox suite chosen: choose one (PUT /api/v1/mailbox-suites) or ask with ?suite=microsoft365 or ?suite=google-workspace',
      );
    }
    return setupScript(chosen, await this.valuesOf(settings));
  }

  private async valuesOf(settings: CompanyMailboxSettings): Promise<SetupScriptValues> {
    const env = this.config.env;
    return {
      relayName: env.RELAY_NAME,
      smartHost: env.RELAY_SMARTHOST,
      tlsDomain: env.RELAY_TLS_DOMAIN ?? env.RELAY_SMARTHOST,
      relayUsername: settings.relayUsername,
      domains: await this.domains.verifiedNames(settings.companyId),
      groupName: settings.mailboxGroupName,
    };
  }
}

function stepsFor(settings: CompanyMailboxSettings, v: SetupScriptValues): string[] {
  const verify =
    v.domains.length === 0
      ? ['Add and verify your sender domains (Domains): the relay only accepts mail from them.']
      : [];
  switch (settings.mailboxSuite) {
    case 'microsoft365':
      return [
        ...verify,
        "Add Microsoft 365's outbound IP ranges to the company's allowed IPs, so the relay accepts its mail without SMTP authentication.",
        'Make a script URL (POST /api/v1/mailbox-suites/script-token) or download the preview.',
        'Run the script in PowerShell as an Exchange Online administrator (it installs nothing and can be run again).',
        `It creates the outbound connector "${v.relayName} relay" to ${v.smartHost} (TLS checked against ${v.tlsDomain}) and the transport rule "${v.relayName} route"${v.groupName ? ` for members of "${v.groupName}"` : ''}.`,
        `Send a test message to an outside address: its Received headers name ${v.smartHost}.`,
      ];
    case 'google-workspace':
      return [
        ...verify,
        "Add Google Workspace's outbound IP ranges to the company's allowed IPs, so the relay accepts its mail without SMTP authentication.",
        'In the Google Admin console open Apps > Google Workspace > Gmail > Routing.',
        `Set "Outbound gateway" to ${v.smartHost} and require TLS, then save.`,
        `Send a test message to an outside address: its Received headers name ${v.smartHost}.`,
      ];
    case 'none':
      return [
        ...verify,
        `Point your mail server's smart host (relayhost) at ${v.smartHost}, port 587, with STARTTLS.`,
        `Authenticate with the relay username ${v.relayUsername} and its relay password (reset it from the company page if you do not have it).`,
        'Or choose a mailbox suite here to get a personalised setup script.',
      ];
  }
}
