package dev.once.examples.payments;

import dev.once.spring.Idempotent;
import java.net.URI;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /api/payments} (once per Idempotency-Key) and {@code GET /api/payments/{id}}. */
@RestController
class PaymentsController {

  private static final String PROBLEMS = "https://payments.example/problems/";

  private final Payments payments;
  private final Ledger ledger;

  PaymentsController(Payments payments, Ledger ledger) {
    this.payments = payments;
    this.ledger = ledger;
  }

  @PostMapping("/api/payments")
  @Idempotent(keyRequired = true)
  ResponseEntity<?> create(
      @RequestAttribute(ApiKeyFilter.MERCHANT) String merchant,
      @RequestBody PaymentRequest request) {
    Payments.Outcome outcome = payments.pay(merchant, request);
    if (outcome instanceof Payments.Outcome.Paid paid) {
      return ResponseEntity.created(URI.create("/api/payments/" + paid.payment().id()))
          .body(paid.payment());
    }
    Payments.Outcome.Refused refused = (Payments.Outcome.Refused) outcome;
    return problem(refused.status(), refused.type(), refused.title(), refused.detail());
  }

  @GetMapping("/api/payments/{id}")
  ResponseEntity<?> show(
      @RequestAttribute(ApiKeyFilter.MERCHANT) String merchant, @PathVariable String id) {
    return ledger
        .find(merchant, id)
        .<ResponseEntity<?>>map(ResponseEntity::ok)
        .orElseGet(
            () ->
                problem(
                    HttpStatus.NOT_FOUND,
                    "payment-not-found",
                    "Payment not found",
                    "no payment " + id));
  }

  private static ResponseEntity<ProblemDetail> problem(
      HttpStatus status, String type, String title, String detail) {
    ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
    problem.setType(URI.create(PROBLEMS + type));
    problem.setTitle(title);
    return ResponseEntity.status(status).body(problem);
  }
}
