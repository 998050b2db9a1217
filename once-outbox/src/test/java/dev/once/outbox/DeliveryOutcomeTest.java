package dev.once.outbox;

import static dev.once.ExhaustiveVisitors.assertExhaustive;

import org.junit.jupiter.api.Test;

class DeliveryOutcomeTest {

  @Test
  void everyOutcomeHasItsOwnVisitorMethodAndNoneHasADefault() {
    assertExhaustive(DeliveryOutcome.class, DeliveryOutcome.Visitor.class);
  }
}
