/**
 * A processing profile of an account (`tender accounts profiles`): a code payments and transfers may
 * name, active until the operator disables it, for good. Its status moves through its own table.
 */
import { Result, Schema } from "effect"
import { Conflict } from "../kernel/Errors.ts"
import { define, type Machine, step } from "../kernel/StateMachine.ts"

export const PROFILE_STATUSES = ["active", "disabled"] as const
export type ProfileStatus = (typeof PROFILE_STATUSES)[number]
export type ProfileTrigger = "disable"

export const ProfileMachine: Machine<ProfileStatus, ProfileTrigger> = define({
  name: "Processing profile",
  states: PROFILE_STATUSES,
  finals: ["disabled"],
  transitions: [
    { from: ["active"], trigger: "disable", to: "disabled", when: "`tender accounts profiles disable`; a payment or transfer naming it is refused from then on" }
  ]
})

/** A processing profile: a code a payment or transfer names to pick its channels (and settings). */
export const ProcessingProfile = Schema.Struct({
  code: Schema.String,
  name: Schema.NullOr(Schema.String),
  status: Schema.Literals(PROFILE_STATUSES),
  created_at: Schema.String,
  /**
   * Channels the profile's payments and transfers are pinned to (`tender accounts channels pin`):
   * routing picks among these only. Absent or empty: every channel of the account.
   */
  channels: Schema.optional(Schema.Array(Schema.String))
})
/** A processing profile of an account. */
export type ProcessingProfile = typeof ProcessingProfile.Type

/** A profile's code: what payments and transfers send as `processing_profile`. */
export const PROFILE_CODE = /^[a-z0-9][a-z0-9_-]{0,63}$/

/** A new profile: `active`. */
export const born = (code: string, name: string | null, now: string): ProcessingProfile => ({
  code,
  name,
  status: "active",
  created_at: now
})

/** The profile's next status through the table; a disabled profile stays disabled. */
export const transition = (profile: ProcessingProfile, trigger: ProfileTrigger): Result.Result<ProcessingProfile, Conflict> => {
  const status = step(ProfileMachine, profile.status, trigger)
  return status === undefined
    ? Result.fail(new Conflict({ message: `Processing profile ${profile.code} is already ${profile.status}` }))
    : Result.succeed({ ...profile, status })
}
