import { IsEmail, IsNotEmpty, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { NormalizeEmail } from '../../../common/validation/query-transforms';
import { Omittable } from '../../../common/validation/presence';

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 128;
const PHONE = /^\+?[0-9][0-9 ()./-]{3,31}$/;

export class RegisterDto {
  /** The customer company's display name. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  companyName: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  fullName: string;

  @NormalizeEmail()
  @IsEmail()
  @MaxLength(254)
  email: string;

  /** 10 to 128 characters. */
  @IsString()
  @MinLength(PASSWORD_MIN)
  @MaxLength(PASSWORD_MAX)
  password: string;

  @Omittable()
  @IsString()
  @Matches(PHONE, { message: 'phone must be a phone number' })
  phone?: string;
}

export class LoginDto {
  @NormalizeEmail()
  @IsEmail()
  @MaxLength(254)
  email: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(PASSWORD_MAX)
  password: string;
}

export class EmailDto {
  @NormalizeEmail()
  @IsEmail()
  @MaxLength(254)
  email: string;
}

export class TokenDto {
  /** The token from the e-mail link. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(4096)
  token: string;
}

export class ResetPasswordDto {
  /** The token from the reset e-mail link. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(4096)
  token: string;

  @IsString()
  @MinLength(PASSWORD_MIN)
  @MaxLength(PASSWORD_MAX)
  password: string;
}

export class ChangePasswordDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(PASSWORD_MAX)
  currentPassword: string;

  @IsString()
  @MinLength(PASSWORD_MIN)
  @MaxLength(PASSWORD_MAX)
  newPassword: string;
}

export class UpdateMeDto {
  @Omittable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  fullName?: string;

  @Omittable()
  @IsString()
  @Matches(PHONE, { message: 'phone must be a phone number' })
  phone?: string;

  @Omittable()
  @IsString()
  @MaxLength(100)
  position?: string;
}
