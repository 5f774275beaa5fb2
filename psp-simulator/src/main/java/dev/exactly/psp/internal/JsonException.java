package dev.exactly.psp.internal;

/** Malformed JSON, or JSON of the wrong shape; the message says where and why. */
public final class JsonException extends RuntimeException {

    public JsonException(String message) {
        super(message, null, false, false);
    }
}
