package dev.exactly.payments.json;

/**
 * What is wrong with one member of a request body.
 *
 * @param field   the member ({@code metadata.key} for a nested one; empty for the body as a whole)
 * @param code    a stable code: {@code parameter_missing}, {@code parameter_invalid}, {@code parameter_unknown},
 *                {@code parameter_duplicated} (a member named twice), {@code body_missing}, {@code invalid_json},
 *                {@code invalid_body}
 * @param message what the member must be, for people
 */
public record FieldError(String field, String code, String message) {}
