package dev.exactly.payments.charge;

/** What an operator's action on a stuck or dead-lettered charge came to ({@link ChargeOperations}). */
public sealed interface OperatorResult {

    /**
     * The action ran.
     *
     * @param answer what a client with the charge's key is answered now
     * @param charge the charge afterwards
     */
    record Done(ChargeResult answer, ChargeRow charge) implements OperatorResult {}

    /** No such charge. */
    record NotFound() implements OperatorResult {}

    /** The charge is already settled. */
    record AlreadyFinished(ChargeStatus status) implements OperatorResult {}

    /** Someone owns the charge right now (a request, a retry, the worker). */
    record Busy() implements OperatorResult {}

    /**
     * The processor's record contradicts the outcome the operator gave.
     *
     * @param processorStatus the processor's status of the charge
     * @param captured        whether the processor captured it
     */
    record ProcessorDisagrees(String processorStatus, boolean captured) implements OperatorResult {}
}
