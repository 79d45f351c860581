package io.github.tenantintegration.tenanttest;

import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.filestorage.FileStorage;
import io.github.tenantintegration.tokenmanager.TokenManager;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;

/** One process of a fleet sharing a token file: gets a token once, prints how it ended. Args: url client redirect file offsetMs. */
public final class FleetMember {
    private FleetMember() {}

    public static void main(String[] args) {
        Clock clock = Clock.offset(Clock.systemUTC(), Duration.ofMillis(Long.parseLong(args[4])));
        TokenManager manager = TokenManager.builder(args[0], args[1], args[2])
                .scopes(Scope.PROFILE_READ)
                .clock(clock)
                .storage(FileStorage.of(Path.of(args[3])))
                .build();
        try {
            manager.accessToken();
            System.out.println("ok");
        } catch (RuntimeException e) {
            System.out.println("failed " + e.getMessage());
        }
    }
}
