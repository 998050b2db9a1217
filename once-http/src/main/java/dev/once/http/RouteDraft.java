package dev.once.http;

import dev.once.ExecutionPolicy;
import dev.once.InFlightPolicy;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * A route being built from options. In-flight mode and its wait bound are kept apart until {@link
 * #build()}, so that options may come in any order and a bound set without the mode (say in the
 * defaults, with the mode on one route) still applies once the mode is wait.
 */
final class RouteDraft {

  final RoutePolicy.Builder route;
  final ExecutionPolicy.Builder execution;
  private final InFlightPolicy baseInFlight;
  private @Nullable String inFlight;
  private @Nullable Duration maxWait;

  RouteDraft(RoutePolicy base) {
    this.route = base.toBuilder();
    this.execution = base.execution().toBuilder();
    this.baseInFlight = base.execution().inFlight();
  }

  void inFlight(String mode) {
    if (!RouteOptions.IN_FLIGHT_CHOICES.contains(mode)) {
      throw new IllegalArgumentException(
          "must be one of " + RouteOptions.IN_FLIGHT_CHOICES + ", was '" + mode + "'");
    }
    this.inFlight = mode;
  }

  void maxWait(Duration maxWait) {
    new InFlightPolicy.Wait(maxWait); // validates now, so the error names max-wait
    this.maxWait = maxWait;
  }

  RoutePolicy build() {
    boolean wait =
        inFlight == null ? baseInFlight instanceof InFlightPolicy.Wait : inFlight.equals("wait");
    if (wait) {
      Duration bound =
          maxWait != null
              ? maxWait
              : baseInFlight instanceof InFlightPolicy.Wait w
                  ? w.maxWait()
                  : RouteOptions.DEFAULT_MAX_WAIT;
      execution.inFlight(InFlightPolicy.waitUpTo(bound));
    } else {
      execution.inFlight(InFlightPolicy.reject());
    }
    return route.execution(execution.build()).build();
  }
}
