"""WindowSizeBolt: a sliding window bolt that logs each window's size and the running
average size."""

from heronpy.api.bolt.window_bolt import SlidingWindowBolt


class WindowSizeBolt(SlidingWindowBolt):
    def initialize(self, config, context):
        super().initialize(config, context)
        self.numerator = 0.0
        self.denominator = 0.0

    def processWindow(self, window_info, tuples):
        self.numerator += len(tuples)
        self.denominator += 1
        self.logger.info(
            "Window [%d, %d] holds %d tuples; the current average is %s",
            window_info.start,
            window_info.end,
            len(tuples),
            self.numerator / self.denominator,
        )
