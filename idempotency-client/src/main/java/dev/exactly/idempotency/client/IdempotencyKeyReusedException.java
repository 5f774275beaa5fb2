package dev.exactly.idempotency.client;

import dev.exactly.idempotency.client.internal.ProblemDocument;

/**
 * The server answered 422 {@code idempotency-key-reused}: this key was first used with a different
 * request. That is a bug in the caller (one key names one request), so it is never retried. The earlier
 * request's outcome stands; the request sent now was not executed under this key.
 */
public final class IdempotencyKeyReusedException extends IdempotencyClientException {
    /** The problem type of the answer. */
    public static final String PROBLEM_TYPE = "https://exactly.dev/problems/idempotency-key-reused";
    /** Its Stripe-style code. */
    public static final String PROBLEM_CODE = "idempotency_key_reused";

    private final IdempotentResponse answer;

    public IdempotencyKeyReusedException(IdempotentResponse answer) {
        super(
                answer.key(),
                "Idempotency-Key " + answer.key() + " was already used with a different request ("
                        + answer.uri() + " answered 422 " + PROBLEM_CODE
                        + "); a key names one request, and this request was "
                        + "not executed under it",
                null);
        this.answer = answer;
    }

    /**
     * Whether an answer says the key was reused: status 422 with a problem document whose {@code type} is
     * {@value #PROBLEM_TYPE} or whose {@code code} is {@value #PROBLEM_CODE} (as Stripe and the processor
     * stand-in say it).
     */
    public static boolean isKeyReused(int status, byte[] body) {
        if (status != 422) {
            return false;
        }
        ProblemDocument problem = ProblemDocument.parse(body);
        return problem.string("type").filter(PROBLEM_TYPE::equals).isPresent()
                || problem.string("code").filter(PROBLEM_CODE::equals).isPresent();
    }

    /** The 422 answer. */
    public IdempotentResponse answer() {
        return answer;
    }
}
