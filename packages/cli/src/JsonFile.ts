/**
 * A JSON file an operator hands a command (`--credentials-file`, `--file`, `--payment`): its parsed
 * content, or a validation error naming the flag. Neither error repeats what the file holds
 * (JSON.parse's own message quotes the text around the fault, which may be a secret).
 */
import { Errors } from "@tender/domain"
import { Effect, FileSystem } from "effect"

export const read = (flag: string, file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((error) => Errors.invalidField(flag, `cannot be read (${error.reason._tag}): ${file}`))
    )
    try {
      return JSON.parse(text) as unknown
    } catch {
      return yield* Errors.invalidField(flag, `is not valid JSON: ${file}`)
    }
  })
