# A storm-starter style multilang bolt: storm.BasicBolt, storm.emit, module-level run().
import storm


class SplitSentenceBolt(storm.BasicBolt):
    def process(self, tup):
        words = tup.values[0].split(" ")
        for word in words:
            storm.emit([word])


SplitSentenceBolt().run()
