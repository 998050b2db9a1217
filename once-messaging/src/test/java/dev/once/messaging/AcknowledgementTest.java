package dev.once.messaging;

import static dev.once.ExhaustiveVisitors.assertExhaustive;

import org.junit.jupiter.api.Test;

class AcknowledgementTest {

  @Test
  void everyAcknowledgementHasItsOwnVisitorMethodAndNoneHasADefault() {
    assertExhaustive(Acknowledgement.class, Acknowledgement.Visitor.class);
  }
}
