"""From texts to claims: what a text states, and which metric it is about.

Takes mentions (model.Mention), the vocabulary and the known metrics; gives readings
(`phrases`: text -> facet values), claims (`attribution`: readings -> the metric they are
about, through `MetricIndex`), sightings (`sightings`: every place that names a metric, and the
texts that name a flag), the text each tooltip table shows for each known key (`tooltips`),
and one file's view: all its texts state and name (`views`).
"""
