package dev.exactly.idempotency;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The outcome replayed to every retry: a status, allow-listed headers and the exact body bytes.
 * Immutable: the constructor copies the headers and the bytes, and {@link #body()} the bytes, so no caller
 * can change what a later replay sends.
 *
 * @param status  the status code (HTTP semantics, but the engine does not interpret it)
 * @param headers header names (lower-cased) to values, in order
 * @param body    the body bytes
 */
public record StoredResponse(int status, Map<String, List<String>> headers, byte[] body) {

    public StoredResponse {
        if (status < 100 || status > 999) {
            throw new IllegalArgumentException("status must be a three-digit code");
        }
        headers = ResponseHeaders.copyOf(headers);
        body = body.clone();
    }

    public static StoredResponse of(int status, byte[] body) {
        return new StoredResponse(status, Map.of(), body);
    }

    /**
     * A response whose headers are given as names and values in turn ({@code name, value, name, value...}), as a
     * store that keeps them flat reads them back: equal to the response of the map those pairs make (names
     * lower-cased, a name that comes again adding its value), without the map.
     *
     * @throws IllegalArgumentException an odd number of header elements, or a status that is not three digits
     * @throws NullPointerException     a null name or value
     */
    public static StoredResponse ofHeaderPairs(int status, String[] namesAndValues, byte[] body) {
        return new StoredResponse(status, ResponseHeaders.ofPairs(namesAndValues), body);
    }

    /** A copy of the body. */
    @Override
    public byte[] body() {
        return body.clone();
    }

    public int bodyLength() {
        return body.length;
    }

    /** Writes the body without copying it. */
    public void writeBodyTo(OutputStream out) throws IOException {
        out.write(body);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoredResponse other
                && status == other.status
                && headers.equals(other.headers)
                && Arrays.equals(body, other.body);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * status + headers.hashCode()) + Arrays.hashCode(body);
    }

    @Override
    public String toString() {
        return "StoredResponse[status=" + status + ", headers=" + headers.keySet() + ", body=" + body.length
                + " bytes]";
    }
}
