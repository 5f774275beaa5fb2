package dev.exactly.payments.api;

import dev.exactly.idempotency.IdempotencyException;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.servlet.Problems;
import dev.exactly.ledger.LedgerRetryableException;
import dev.exactly.ledger.LedgerStorageException;
import dev.exactly.payments.ApiException;
import dev.exactly.payments.ApiProblems;
import dev.exactly.payments.ApiResponse;
import dev.exactly.payments.db.DatabaseException;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.HttpMediaTypeNotAcceptableException;
import org.springframework.web.HttpMediaTypeNotSupportedException;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.resource.NoResourceFoundException;

/**
 * Every failure becomes a problem document with a stable type: expected refusals carry their answer,
 * infrastructure failures are 503 with {@code Retry-After} — "refused before it ran" only where nothing
 * can have been written, "outcome unknown" otherwise — and protocol errors keep their status. Only a bug
 * is a 500, and none of these answers is recorded by the hot tier.
 */
@RestControllerAdvice
public class ApiExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(ApiExceptionHandler.class);

    @ExceptionHandler(ApiException.class)
    ResponseEntity<byte[]> api(ApiException e, HttpServletRequest request) {
        return Http.entity(e.response(), request);
    }

    @ExceptionHandler(StoreUnavailableException.class)
    ResponseEntity<byte[]> store(StoreUnavailableException e, HttpServletRequest request) {
        log.warn("idempotency store unavailable: {}", e.getMessage());
        return Http.entity(ApiProblems.idempotency(Problems.storeUnavailable(), Duration.ofSeconds(2)), request);
    }

    @ExceptionHandler(IdempotencyException.class)
    ResponseEntity<byte[]> idempotency(IdempotencyException e, HttpServletRequest request) {
        return Http.entity(ApiProblems.idempotency(Problems.from(e), null), request);
    }

    /**
     * A database failure that no business step answered itself. Nothing was written if no connection could
     * be had, or if the request only reads; otherwise a commit may have happened: outcome unknown.
     */
    @ExceptionHandler({DatabaseException.class, LedgerStorageException.class, LedgerRetryableException.class})
    ResponseEntity<byte[]> database(RuntimeException e, HttpServletRequest request) {
        log.warn("database failure in {} {}: {}", request.getMethod(), request.getRequestURI(), e.getMessage());
        boolean nothingWritten = (e instanceof DatabaseException db && db.beforeAnyStatement())
                || request.getMethod().equals("GET") || request.getMethod().equals("HEAD");
        return Http.entity(nothingWritten
                ? ApiProblems.databaseUnavailable()
                : ApiProblems.outcomeUnknown("the database failed while the request was being written", null), request);
    }

    @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
    ResponseEntity<byte[]> method(HttpRequestMethodNotSupportedException e, HttpServletRequest request) {
        return Http.entity(ApiProblems.forStatus(405, e.getMessage()), request);
    }

    @ExceptionHandler(HttpMediaTypeNotSupportedException.class)
    ResponseEntity<byte[]> mediaType(HttpMediaTypeNotSupportedException e, HttpServletRequest request) {
        return Http.entity(ApiProblems.forStatus(415, e.getMessage()), request);
    }

    @ExceptionHandler(HttpMediaTypeNotAcceptableException.class)
    ResponseEntity<byte[]> acceptable(HttpMediaTypeNotAcceptableException e, HttpServletRequest request) {
        return Http.entity(ApiProblems.forStatus(406, e.getMessage()), request);
    }

    @ExceptionHandler(NoResourceFoundException.class)
    ResponseEntity<byte[]> noResource(NoResourceFoundException e, HttpServletRequest request) {
        return Http.entity(ApiProblems.notFound("resource"), request);
    }

    @ExceptionHandler(HttpMessageNotReadableException.class)
    ResponseEntity<byte[]> unreadable(HttpMessageNotReadableException e, HttpServletRequest request) {
        return Http.entity(ApiProblems.validationFailed("the request body could not be read",
                List.of(Map.of("field", "", "code", "invalid_body", "message", "unreadable body"))), request);
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<byte[]> unexpected(Exception e, HttpServletRequest request) {
        if (e.getCause() instanceof dev.exactly.payments.charge.CrashPoint.InjectedCrash crash) {
            log.info("{} {} died by the test hook: {}", request.getMethod(), request.getRequestURI(), crash.getMessage());
            return Http.entity(ApiProblems.internalError(), request);
        }
        log.error("unexpected failure of {} {}", request.getMethod(), request.getRequestURI(), e);
        ApiResponse answer = ApiProblems.internalError();
        return Http.entity(answer, request);
    }
}
