import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsString, MaxLength, ValidateBy } from 'class-validator';
import { Nullable, Omittable } from '../../../common/validation/presence';
import { MAILBOX_SUITES, type MailboxSuite } from '../../companies/entities/company.entity';
import { SCRIPT_UNSAFE, type ScriptSuite } from '../setup-script';

export const SCRIPT_SUITES = ['microsoft365', 'google-workspace'] as const;

/** `PUT /api/v1/mailbox-suites`: replaces the choice; a group left out or `null`/`""` is cleared. */
export class SaveMailboxSuiteDto {
  @ApiProperty({ enum: MAILBOX_SUITES })
  @IsIn(MAILBOX_SUITES)
  suite: MailboxSuite;

  /**
   * Microsoft 365 distribution group the transport rule is scoped to (every sender of the
   * verified domains when absent). No line breaks or other control characters.
   */
  @Nullable()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @MaxLength(256)
  @ValidateBy({
    name: 'scriptSafe',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && !SCRIPT_UNSAFE.test(value),
      defaultMessage: () => 'groupName must not contain line breaks or control characters',
    },
  })
  groupName?: string | null;
}

/** `?suite=` of the preview and the public script: the company's own choice when left out. */
export class ScriptSuiteQueryDto {
  @ApiProperty({ enum: SCRIPT_SUITES, required: false })
  @Omittable()
  @IsIn(SCRIPT_SUITES)
  suite?: ScriptSuite;
}

export class MailboxSuiteDto {
  @ApiProperty({ enum: MAILBOX_SUITES }) suite: MailboxSuite;
  /** The M365 distribution group the rule is scoped to, or null for every sender. */
  @ApiProperty({ type: String, nullable: true }) groupName: string | null;
  /** The relay host the suite sends to (RELAY_SMARTHOST). */
  smartHost: string;
  /** The name the relay's TLS certificate is checked against (RELAY_TLS_DOMAIN). */
  tlsDomain: string;
  /** The company's relay account. */
  relayUsername: string;
  /** The verified sender domains the script routes through the relay. */
  domains: string[];
  /** The public URL of the personalised script, or null until the owner makes one (`POST /script-token`). */
  @ApiProperty({ type: String, nullable: true }) scriptUrl: string | null;
  /** What to do, in order, for the chosen suite. */
  steps: string[];
}

export class ScriptPreviewDto {
  /** `relay-setup-<relayUsername>.ps1` (Microsoft 365) or `.txt` (Google Workspace). */
  filename: string;
  /** The script or the instructions, as the public URL serves them. */
  content: string;
}
