package dev.exactly.payments.api;

import dev.exactly.idempotency.IdempotencyException;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.servlet.HttpProtocol;
import dev.exactly.idempotency.servlet.Problems;
import dev.exactly.ledger.LedgerRetryableException;
import dev.exactly.ledger.LedgerStorageException;
import dev.exactly.payments.db.DatabaseException;
import dev.exactly.payments.security.ProblemWriter;
import dev.exactly.payments.web.ApiException;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import org.apache.tomcat.util.http.InvalidParameterException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
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
        ResponseEntity<byte[]> answer = Http.entity(e.response(), request);
        if (e.headers().isEmpty()) {
            return answer;
        }
        HttpHeaders own = new HttpHeaders();
        e.headers().forEach(own::set);
        return withHeaders(answer, own);
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
                || request.getMethod().equals("GET")
                || request.getMethod().equals("HEAD");
        String detail = "the database failed while the request was being written";
        return Http.entity(
                nothingWritten
                        ? ApiProblems.databaseUnavailable()
                        : keyed(request)
                                ? ApiProblems.outcomeUnknown(detail, null)
                                : ApiProblems.outcomeUnknownWithoutKey(detail),
                request);
    }

    /**
     * Whether the request carried an idempotency key (in {@code Idempotency-Key} or the alias the hot tier
     * accepts, {@code X-Idempotency-Key}), with which a retry gets its outcome.
     */
    private static boolean keyed(HttpServletRequest request) {
        return request.getHeader(HttpProtocol.KEY_HEADER) != null
                || request.getHeader(HttpProtocol.KEY_ALIAS_HEADER) != null;
    }

    /** 405 with {@code Allow}: the methods the resource takes (RFC 9110, section 15.5.6, requires it). */
    @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
    ResponseEntity<byte[]> method(HttpRequestMethodNotSupportedException e, HttpServletRequest request) {
        // Spring names the handlers' methods; HEAD (with GET) and OPTIONS are taken too, as OPTIONS's Allow says
        HttpHeaders allow = new HttpHeaders();
        allow.set(
                HttpHeaders.ALLOW,
                AllowedMethods.allow(
                        e.getSupportedHttpMethods() == null ? java.util.Set.of() : e.getSupportedHttpMethods()));
        return withHeaders(Http.entity(ApiProblems.forStatus(405, e.getMessage()), request), allow);
    }

    /** 415 with {@code Accept}: the media types the endpoint reads. */
    @ExceptionHandler(HttpMediaTypeNotSupportedException.class)
    ResponseEntity<byte[]> mediaType(HttpMediaTypeNotSupportedException e, HttpServletRequest request) {
        return withHeaders(Http.entity(ApiProblems.forStatus(415, e.getMessage()), request), e.getHeaders());
    }

    /** An answer with the headers a protocol error names besides its problem document. */
    private static ResponseEntity<byte[]> withHeaders(ResponseEntity<byte[]> answer, HttpHeaders extra) {
        HttpHeaders headers = new HttpHeaders();
        headers.putAll(answer.getHeaders());
        headers.putAll(extra);
        return new ResponseEntity<>(answer.getBody(), headers, answer.getStatusCode());
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
        return Http.entity(ApiProblems.unreadableBody(), request);
    }

    /** A query string or form the container could not decode (e.g. {@code %ff} that is not UTF-8). */
    @ExceptionHandler(InvalidParameterException.class)
    ResponseEntity<byte[]> undecodable(InvalidParameterException e, HttpServletRequest request) {
        return Http.entity(ApiProblems.containerError(400), request);
    }

    @ExceptionHandler(Exception.class)
    @Nullable
    ResponseEntity<byte[]> unexpected(Exception e, HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        if (request.getDispatcherType() == DispatcherType.ERROR) {
            // rendering an error failed (its original path cannot even be decoded): answer the error that was
            // being rendered, written directly (no message converter looks at that path again)
            Object status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
            log.debug(
                    "{} while rendering error {} of {}",
                    e.toString(),
                    status,
                    request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI));
            ProblemWriter.write(
                    response, ApiProblems.containerError(status instanceof Integer code && code >= 400 ? code : 400));
            return null;
        }
        log.error("unexpected failure of {} {}", request.getMethod(), request.getRequestURI(), e);
        ApiResponse answer = ApiProblems.internalError(keyed(request));
        return Http.entity(answer, request);
    }
}
